import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statSync, type Stats } from 'node:fs';
import { relative, isAbsolute } from 'node:path';

/**
 * Opening a file as a file: whatever an index or a model names is checked to
 * be a regular file (a symlink to /dev/zero was read until memory ran out; a
 * FIFO hung start-up forever), inside its directory where one is given (a
 * manifest naming `../x` made the server stat files elsewhere), and of a
 * plausible size where it is read whole (a 300 MB manifest was read whole).
 */
export interface FileRules {
  /** The file must resolve, symlinks followed, to a path inside this directory. */
  within?: string;
  /** The largest size accepted, bytes. */
  maxBytes?: number;
}

/** What is wrong with `path` under `rules`, as words to follow its name ("is a FIFO, not a regular file"), or undefined. */
export function fileProblem(path: string, rules: FileRules = {}): string | undefined {
  let st: Stats;
  try {
    st = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'is missing' : `cannot be read (${code ?? (err as Error).message})`;
  }
  return statProblem(st, rules) ?? outsideProblem(path, rules.within);
}

/**
 * The file's bytes, read only after the checks pass on the very file opened
 * (opened non-blocking, so a FIFO is refused instead of waited on), or the
 * problem as `fail` makes it an error.
 */
export function readRegularFile(path: string, rules: FileRules, fail: (problem: string) => Error): Buffer {
  const outside = outsideProblem(path, rules.within);
  if (outside) throw fail(outside);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw fail(code === 'ENOENT' ? 'is missing' : `cannot be read (${code ?? (err as Error).message})`);
  }
  try {
    const problem = statProblem(fstatSync(fd), rules);
    if (problem) throw fail(problem);
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buf, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buf.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

function statProblem(st: Stats, rules: FileRules): string | undefined {
  if (!st.isFile()) return `is ${kindOf(st)}, not a regular file`;
  if (rules.maxBytes !== undefined && st.size > rules.maxBytes)
    return `is ${st.size} bytes, more than such a file can be (${rules.maxBytes})`;
  return undefined;
}

function outsideProblem(path: string, within: string | undefined): string | undefined {
  if (within === undefined) return undefined;
  let real: string;
  let root: string;
  try {
    real = realpathSync(path);
    root = realpathSync(within);
  } catch {
    return undefined; // a missing file is reported as missing by the caller's next step
  }
  const rel = relative(root, real);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? `resolves to ${real}, outside ${root}` : undefined;
}

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a file';
}

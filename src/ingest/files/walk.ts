import { closeSync, lstatSync, readdirSync, type Dirent } from 'node:fs';
import { listingPath, openDirInside, realRoot } from './contained.js';
import { RetrieverError } from '../../errors.js';
import { globMatcher } from './globs.js';
import { own } from '../../util/own.js';

/** The kinds of file a folder corpus reads, by extension (lower case). */
export const FILE_KINDS = {
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.mdx': 'markdown',
  '.txt': 'text',
  '.text': 'text',
  '.rst': 'text',
  '.html': 'html',
  '.htm': 'html',
  '.xhtml': 'html',
  '.pdf': 'pdf',
} as const;
export type FileKind = (typeof FILE_KINDS)[keyof typeof FILE_KINDS];

/** Folders never entered, whatever the globs say: they hold tooling, not documents. */
export const SKIPPED_DIR_NAMES: ReadonlySet<string> = new Set([
  'node_modules',
  '__pycache__',
  'venv',
  '.venv',
  'site-packages',
]);

export interface FolderOptions {
  /** Globs over the path relative to the folder (`**`, `*`, `?`, `{a,b}`); a file must match one. Default: every known kind. */
  include?: string[];
  /** Globs a file or folder must not match. */
  exclude?: string[];
  /** Files above this many bytes are listed as skipped, not read. */
  maxFileBytes: number;
}

/** The selection when a caller names none: every known kind, up to 64 MiB a file (a PDF of a few thousand pages). */
export const DEFAULT_FOLDER: FolderOptions = { maxFileBytes: 64 * 2 ** 20 };

export interface FolderEntry {
  /** Path relative to the folder, with `/` separators: the document id (bytes that are not UTF-8 as `%XX`). */
  rel: string;
  /** The path as the file system has it: bytes, since a name need not be UTF-8. */
  abs: Buffer;
  /** Its kind by extension, or `sniff`: no extension (LICENSE, Makefile) or chosen by --include; read as text if it is. */
  kind: FileKind | 'sniff';
  bytes: number;
  mtimeMs: number;
}

export interface Skipped {
  rel: string;
  reason: string;
}

/** What a walk found: the files to read, those it lists as not read, and how many others it passed over. */
export interface FolderListing {
  entries: FolderEntry[];
  skipped: Skipped[];
  /** Files of kinds a folder corpus does not read (images, archives, code…), by extension. */
  passedOver: Record<string, number>;
}

/**
 * Every document file under `root`, in a stable order (code-point order of
 * the relative paths, so two builds of one folder number chunks alike).
 * Hidden entries and tooling folders are not entered; symlinks are not
 * followed (one could lead out of the folder, or round in a loop), and each
 * folder is listed through a descriptor checked to be inside the root
 * (contained.ts); FIFOs, sockets and devices are listed as not read; files
 * of other kinds are counted as passed over, files too large are listed.
 */
export function listFolder(root: string, opts: FolderOptions): FolderListing {
  const include = opts.include && opts.include.length > 0 ? globMatcher(opts.include) : undefined;
  const exclude = opts.exclude && opts.exclude.length > 0 ? globMatcher(opts.exclude) : undefined;
  const top = realRootOf(root);
  const entries: FolderEntry[] = [];
  const skipped: Skipped[] = [];
  const passedOver: Record<string, number> = {};
  const seen = new Set<string>();
  const stack: Array<{ abs: Buffer; rel: string }> = [{ abs: top.path, rel: '' }];
  while (stack.length > 0) {
    const dir = stack.pop() as { abs: Buffer; rel: string };
    const subdirs: Array<{ abs: Buffer; rel: string }> = [];
    const listing = readDir(dir.abs, top, root);
    if (listing instanceof Error) {
      skipped.push({ rel: `${dir.rel}/`, reason: `cannot list it (${listing.message})` });
      continue;
    }
    for (const d of listing) {
      const raw = d.name as unknown as Buffer;
      if (raw[0] === 0x2e) continue; // hidden: a leading "."
      const name = nameOf(raw);
      const abs = Buffer.concat([dir.abs, SLASH, raw]);
      const rel = dir.rel === '' ? name : `${dir.rel}/${name}`;
      if (exclude?.(rel)) continue;
      if (d.isSymbolicLink()) {
        if (include?.(rel) ?? kindOf(name)) skipped.push({ rel, reason: 'a symbolic link (not followed)' });
        continue;
      }
      if (d.isDirectory()) {
        if (!SKIPPED_DIR_NAMES.has(name)) subdirs.push({ abs, rel });
        continue;
      }
      if (!d.isFile()) {
        skipped.push({ rel, reason: `${specialKind(d)}, not a regular file` });
        continue;
      }
      const known = kindOf(name);
      const kind = include ? (include(rel) ? (known ?? 'sniff') : undefined) : (known ?? sniffed(name));
      if (!kind) {
        const ext = extensionOf(name);
        passedOver[ext] = (passedOver[ext] ?? 0) + 1;
        continue;
      }
      if (seen.has(rel)) {
        skipped.push({ rel, reason: "its name, with the bytes that are not UTF-8 written as %XX, is another file's" });
        continue;
      }
      seen.add(rel);
      let st;
      try {
        st = lstatSync(abs);
      } catch (err) {
        skipped.push({
          rel,
          reason: `cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
        });
        continue;
      }
      if (st.size > opts.maxFileBytes) {
        skipped.push({ rel, reason: `${st.size} bytes, over the ${opts.maxFileBytes}-byte limit (--max-file-mb)` });
        continue;
      }
      entries.push({ rel, abs, kind, bytes: st.size, mtimeMs: st.mtimeMs });
    }
    // depth first, in reverse so the stack pops folders in name order
    subdirs.sort((a, b) => (a.rel < b.rel ? 1 : a.rel > b.rel ? -1 : 0));
    stack.push(...subdirs);
  }
  entries.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return { entries, skipped, passedOver };
}

const SLASH = Buffer.from('/');

export function kindOf(name: string): FileKind | undefined {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return undefined;
  return own(FILE_KINDS as Record<string, FileKind>, name.slice(dot).toLowerCase());
}

/** A file with no extension (LICENSE, README, TODO, COPYING, Makefile): read as text if its bytes are text. */
function sniffed(name: string): 'sniff' | undefined {
  return name.lastIndexOf('.') <= 0 ? 'sniff' : undefined;
}

/** The extension a passed-over file is counted under: ".png", or "(none)". */
function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '(none)' : name.slice(dot).toLowerCase().slice(0, 16);
}

/**
 * A name as a document id: UTF-8 as it is, any byte that is not valid UTF-8 as `%XX` (a file named
 * `bad\xffname.md` was listed as `bad\ufffdname.md`, which no call could open, and ended the build).
 */
export function nameOf(raw: Buffer): string {
  const text = raw.toString('utf8');
  if (!text.includes('\ufffd') || Buffer.from(text, 'utf8').equals(raw)) return text;
  let out = '';
  let i = 0;
  while (i < raw.length) {
    const n = utf8SequenceLength(raw, i);
    if (n > 0) {
      out += raw.toString('utf8', i, i + n);
      i += n;
    } else {
      out += `%${(raw[i] as number).toString(16).toUpperCase().padStart(2, '0')}`;
      i++;
    }
  }
  return out;
}

/** The length of the well-formed UTF-8 sequence at `i`, or 0 where the byte starts none. */
function utf8SequenceLength(b: Buffer, i: number): number {
  const c = b[i] as number;
  if (c < 0x80) return 1;
  const n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n === 0 || i + n > b.length) return 0;
  for (let k = 1; k < n; k++) if (((b[i + k] as number) & 0xc0) !== 0x80) return 0;
  const text = b.toString('utf8', i, i + n);
  return text.length > 0 && !text.includes('\ufffd') ? n : 0;
}

function specialKind(d: Dirent): string {
  if (d.isFIFO()) return 'a FIFO (named pipe)';
  if (d.isSocket()) return 'a socket';
  if (d.isCharacterDevice()) return 'a character device';
  if (d.isBlockDevice()) return 'a block device';
  return 'not a file';
}

function realRootOf(root: string): { path: Buffer; withSlash: Buffer } {
  let withSlash: Buffer;
  try {
    withSlash = realRoot(root);
  } catch (err) {
    throw new RetrieverError('BAD_INPUT', `cannot read the folder ${root}: ${(err as Error).message}; check --input`, {
      cause: err,
    });
  }
  return { path: withSlash.length > 1 ? withSlash.subarray(0, -1) : withSlash, withSlash };
}

/** A folder's entries, listed through a descriptor checked to be inside the root (contained.ts). */
function readDir(dir: Buffer, top: { path: Buffer; withSlash: Buffer }, root: string): Dirent[] | Error {
  const fd = openDirInside(dir, top.withSlash);
  if (fd instanceof Error) {
    if (dir !== top.path) return fd;
    throw new RetrieverError('BAD_INPUT', `cannot read the folder ${root}: ${fd.message}; check --input`, {
      cause: fd,
    });
  }
  try {
    return readdirSync(listingPath(fd, dir), { withFileTypes: true, encoding: 'buffer' }) as unknown as Dirent[];
  } catch (err) {
    if (dir !== top.path) return err as Error;
    throw new RetrieverError('BAD_INPUT', `cannot read the folder ${root}: ${(err as Error).message}; check --input`, {
      cause: err,
    });
  } finally {
    closeSync(fd);
  }
}

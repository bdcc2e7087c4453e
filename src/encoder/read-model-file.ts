import { RetrieverError } from '../errors.js';
import { fileProblem, readRegularFile } from '../util/regular-file.js';

/** The largest tokenizer.json read (bert-base's is 0.7 MB; multilingual ones reach ~20 MB). */
export const MAX_TOKENIZER_BYTES = 64 * 2 ** 20;
/** The largest JSON settings file of a model directory read (config.json and the like). */
export const MAX_CONFIG_BYTES = 4 * 2 ** 20;

/**
 * A model directory's JSON file, read only when it is a regular file of a
 * sane size (util/regular-file.ts: `tokenizer.json` pointing at /dev/zero was
 * read until memory ran out; a directory in its place gave a bare EISDIR),
 * and parsed: each failure is a one-line MODEL error naming the path.
 */
export function readModelJson(path: string, maxBytes: number): unknown {
  const text = readRegularFile(path, { maxBytes }, (problem) => modelFileError(path, problem)).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new RetrieverError('MODEL', `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** Throws unless `path` is a regular file of at most `maxBytes` (Infinity: any size). */
export function checkModelFile(path: string, maxBytes = Infinity): void {
  const problem = fileProblem(path, maxBytes === Infinity ? {} : { maxBytes });
  if (problem) throw modelFileError(path, problem);
}

function modelFileError(path: string, problem: string): RetrieverError {
  const fix = problem.includes('regular file') ? ': a model directory holds the file itself there' : '';
  return new RetrieverError('MODEL', `${path} ${problem}${fix}`);
}

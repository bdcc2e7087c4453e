import { readFileSync, statSync } from 'node:fs';
import { RetrieverError } from '../errors.js';

/** The largest tokenizer.json read (bert-base's is 0.7 MB; multilingual ones reach ~20 MB). */
export const MAX_TOKENIZER_BYTES = 64 * 2 ** 20;
/** The largest JSON settings file of a model directory read (config.json and the like). */
export const MAX_CONFIG_BYTES = 4 * 2 ** 20;

/**
 * A model directory's text file, read only when it is a regular file of a
 * sane size: `tokenizer.json` pointing at /dev/zero read until memory ran
 * out and aborted the process, and a directory in a file's place gave a bare
 * EISDIR. Either is a one-line MODEL error naming the path.
 */
function readModelFile(path: string, maxBytes: number): string {
  checkModelFile(path, maxBytes);
  return readFileSync(path, 'utf8');
}

/** `readModelFile` parsed as JSON: a file that does not parse is a MODEL error naming it, as is any read error. */
export function readModelJson(path: string, maxBytes: number): unknown {
  const text = readModelFile(path, maxBytes);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new RetrieverError('MODEL', `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** Throws unless `path` is a regular file of at most `maxBytes` (Infinity: any size). */
export function checkModelFile(path: string, maxBytes = Infinity): void {
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    throw new RetrieverError('MODEL', `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  if (!st.isFile()) {
    throw new RetrieverError(
      'MODEL',
      `${path} is ${st.isDirectory() ? 'a directory' : 'not a regular file'}: a model directory holds the file itself there`,
    );
  }
  if (st.size > maxBytes) {
    throw new RetrieverError(
      'MODEL',
      `${path} is ${st.size} bytes, more than a model's file of this kind can be (${maxBytes})`,
    );
  }
}

import { createReadStream, statSync } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { RetrieverError } from '../errors.js';
import type { ReadOptions } from './types.js';

/**
 * Streams a file's bytes in large blocks, transparently gunzipping `*.gz`
 * (Search-R1 ships wiki-18.jsonl.gz). Progress counts bytes of the file on
 * disk, so the ETA is right for compressed input too.
 */
export async function* readBlocks(path: string, opts: ReadOptions = {}): AsyncGenerator<Buffer> {
  let totalBytes: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new Error('not a regular file');
    totalBytes = st.size;
  } catch (err) {
    throw new RetrieverError(
      'BAD_INPUT',
      `cannot read input ${path}: ${(err as Error).message}; check the --input path`,
      { cause: err },
    );
  }
  const file = createReadStream(path, { highWaterMark: 1 << 20 });
  const gz = path.endsWith('.gz');
  const source = gz ? file.pipe(createGunzip()) : file;
  file.on('error', (err) => source.destroy(err));
  const hash = opts.hash;
  if (gz && hash) file.on('data', (b) => hash.update(b as Buffer));
  try {
    for await (const block of source as AsyncIterable<Buffer>) {
      if (!gz) hash?.update(block);
      yield block;
      opts.onProgress?.({ bytesRead: file.bytesRead, totalBytes });
    }
  } catch (err) {
    if (err instanceof RetrieverError) throw err;
    throw new RetrieverError('BAD_INPUT', `error reading ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  } finally {
    file.destroy();
  }
}

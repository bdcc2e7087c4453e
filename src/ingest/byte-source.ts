import { createReadStream, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import { RetrieverError } from '../errors.js';
import type { ReadOptions } from './types.js';

/**
 * Streams a file's bytes in large blocks, transparently gunzipping `*.gz`
 * (Search-R1 ships wiki-18.jsonl.gz). Progress counts bytes of the file on
 * disk, so the ETA is right for compressed input too.
 */
export async function* readBlocks(path: string, opts: ReadOptions = {}): AsyncGenerator<Buffer> {
  const totalBytes = inputSize(path);
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
    throw readError(path, err);
  } finally {
    file.destroy();
  }
}

/**
 * Reads an uncompressed file into `buf` after its first `keep` bytes, a block
 * at a time, for a caller that moves what it still needs to the front between
 * reads: one buffer for the whole file, where a stream allocates (and the
 * kernel zero-fills) a fresh one per block. `next(keep)` returns the filled
 * length, or 0 at the end; it doubles the buffer when `keep` passes half of it.
 */
export class BlockFiller {
  buf = Buffer.allocUnsafe(1 << 20);
  private readonly totalBytes: number;
  private fd: FileHandle | undefined;
  private bytesRead = 0;

  constructor(
    private readonly path: string,
    private readonly opts: ReadOptions = {},
  ) {
    this.totalBytes = inputSize(path);
  }

  async next(keep: number): Promise<number> {
    try {
      this.fd ??= await open(this.path, 'r');
      // a line longer than half the buffer: double it, so that each read still fills half of it or more
      if (keep > this.buf.length / 2) {
        const grown = Buffer.allocUnsafe(this.buf.length * 2);
        this.buf.copy(grown, 0, 0, keep);
        this.buf = grown;
      }
      const { bytesRead } = await this.fd.read(this.buf, keep, this.buf.length - keep, null);
      if (bytesRead === 0) return 0;
      this.opts.hash?.update(this.buf.subarray(keep, keep + bytesRead));
      this.bytesRead += bytesRead;
      this.opts.onProgress?.({ bytesRead: this.bytesRead, totalBytes: this.totalBytes });
      return keep + bytesRead;
    } catch (err) {
      throw readError(this.path, err);
    }
  }

  async close(): Promise<void> {
    await this.fd?.close();
    this.fd = undefined;
  }
}

/** The size of input file `path`, or an error naming the --input path. */
function inputSize(path: string): number {
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new Error('not a regular file');
    return st.size;
  } catch (err) {
    throw new RetrieverError(
      'BAD_INPUT',
      `cannot read input ${path}: ${(err as Error).message}; check the --input path`,
      { cause: err },
    );
  }
}

function readError(path: string, err: unknown): RetrieverError {
  if (err instanceof RetrieverError) return err;
  return new RetrieverError('BAD_INPUT', `error reading ${path}: ${(err as Error).message}`, { cause: err });
}

import { createHash, type Hash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

/**
 * Reads a file front to back in 4 MiB pieces, handing each to `onChunk`. The
 * buffer is reused: `onChunk` must consume the bytes before it returns.
 */
export function forEachFileChunk(path: string, onChunk: (chunk: Buffer) => void): void {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 22);
    for (let pos = 0; ;) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n === 0) break;
      onChunk(buf.subarray(0, n));
      pos += n;
    }
  } finally {
    closeSync(fd);
  }
}

/** Feeds a file through `hash` in 4 MiB reads and returns the hex digest. */
export function hashFile(path: string, hash: Hash = createHash('sha256')): string {
  forEachFileChunk(path, (chunk) => hash.update(chunk));
  return hash.digest('hex');
}

import { createHash, type Hash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

/**
 * Reads a file front to back in 4 MiB pieces, handing each to `onChunk`. The
 * buffer is reused: `onChunk` must consume the bytes before it returns.
 */
export function forEachFileChunk(path: string, onChunk: (chunk: Buffer) => void): void {
  const fd = openSync(path, 'r');
  try {
    forEachFdChunk(fd, onChunk);
  } finally {
    closeSync(fd);
  }
}

/** forEachFileChunk over a descriptor already open (positioned reads: the descriptor's offset is left alone). */
export function forEachFdChunk(fd: number, onChunk: (chunk: Buffer) => void): void {
  const buf = Buffer.allocUnsafe(1 << 22);
  for (let pos = 0; ;) {
    const n = readSync(fd, buf, 0, buf.length, pos);
    if (n === 0) break;
    onChunk(buf.subarray(0, n));
    pos += n;
  }
}

/**
 * forEachFileChunk for long passes on a thread that must stay responsive:
 * every `yieldBytes` it lets the event loop run (a stop signal is handled
 * there) and stops with the signal's reason once `signal` is aborted.
 */
export async function forEachFileChunkYielding(
  path: string,
  onChunk: (chunk: Buffer) => void,
  signal?: AbortSignal,
  yieldBytes = 32 * 2 ** 20,
): Promise<void> {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 22);
    for (let pos = 0, since = 0; ;) {
      if (since >= yieldBytes) {
        since = 0;
        await new Promise((r) => setImmediate(r));
      }
      signal?.throwIfAborted();
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n === 0) break;
      onChunk(buf.subarray(0, n));
      pos += n;
      since += n;
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

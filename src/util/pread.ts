import { readSync } from 'node:fs';

/**
 * Reads `length` bytes at file `position` into `buf` from its start, looping
 * over short reads. Returns the bytes read: fewer than `length` only when the
 * file ends first (the caller names the damage).
 */
export function preadFully(fd: number, buf: Uint8Array, length: number, position: number): number {
  let got = 0;
  while (got < length) {
    const r = readSync(fd, buf, got, length - got, position + got);
    if (r === 0) break;
    got += r;
  }
  return got;
}

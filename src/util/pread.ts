import { read, readSync, write, writeSync } from 'node:fs';

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

/** `preadFully` on libuv's thread pool, so the caller's thread computes while the disk reads. */
export async function preadFullyAsync(fd: number, buf: Uint8Array, length: number, position: number): Promise<number> {
  let got = 0;
  while (got < length) {
    const r = await new Promise<number>((resolve, reject) =>
      read(fd, buf, got, length - got, position + got, (err, n) => (err ? reject(err) : resolve(n))),
    );
    if (r === 0) break;
    got += r;
  }
  return got;
}

/** Writes all of `buf` at file `position` on libuv's thread pool, looping over short writes. */
export async function pwriteFullyAsync(fd: number, buf: Uint8Array, position: number): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    off += await new Promise<number>((resolve, reject) =>
      write(fd, buf, off, buf.length - off, position + off, (err, n) => (err ? reject(err) : resolve(n))),
    );
  }
}

/** Writes all of `buf` at file `position`, looping over short writes. */
export function writeAllAt(fd: number, buf: Uint8Array, position: number): void {
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off, position + off);
}

import {
  closeSync,
  constants,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';

/** fsync a file or directory so a following rename cannot expose torn data. */
export function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** fsync several files at once, on libuv's thread pool (each call's work is the kernel's writeback of that file). */
export async function fsyncFiles(paths: readonly string[]): Promise<void> {
  await Promise.all(paths.map((path) => syncInBackground(path).finish()));
}

/**
 * Starts an fsync of `path` on libuv's thread pool; `finish` waits for it and
 * closes the descriptor. An fsync is mostly a wait on the disk (750 MB of
 * fresh pages: 438 ms, 25 ms of it CPU), so it can run beside other work.
 * The descriptor stays open until `finish`: closing any descriptor of a file
 * drops every POSIX lock the process holds on it, SQLite's included, so for a
 * database that is still open call `finish` after closing it.
 */
export function syncInBackground(path: string): { finish(): Promise<void> } {
  const handle = open(path, 'r');
  const synced = handle.then((h) => h.sync());
  synced.catch(() => undefined); // reported by finish
  return {
    async finish(): Promise<void> {
      try {
        await synced;
      } finally {
        await (await handle.catch(() => undefined))?.close();
      }
    },
  };
}

/** fsync every regular file in `dir`, then the directory itself. */
export function fsyncTree(dir: string): void {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isFile()) fsyncPath(p);
  }
  fsyncPath(dir);
}

/**
 * Creates `path` and writes `data` to it, failing if anything (a file, or a
 * symlink planted by another user of a shared directory) is already there:
 * O_EXCL never follows a symlink at the final name, and O_NOFOLLOW says so
 * twice. Returns with the data on disk when `sync` is set.
 */
export function writeFileExclusive(path: string, data: string | Uint8Array, sync = false, mode = 0o644): void {
  const fd = openSync(path, EXCLUSIVE_FLAGS, mode);
  try {
    const buf = typeof data === 'string' ? Buffer.from(data) : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    if (sync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

const EXCLUSIVE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** Write a small file atomically: a temp file of this process's own (created exclusively), fsync, rename. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}-${Math.floor(Math.random() * 2 ** 32).toString(16)}`;
  try {
    writeFileExclusive(tmp, data, true);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

import { closeSync, fsyncSync, openSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
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

/** fsync every regular file in `dir`, then the directory itself. */
export function fsyncTree(dir: string): void {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isFile()) fsyncPath(p);
  }
  fsyncPath(dir);
}

/** Write a small file atomically: temp file, fsync, rename. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data);
  fsyncPath(tmp);
  renameSync(tmp, path);
}

import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { FileRecord } from '../index/manifest.js';

/** sha256 and size of every file an index consists of, for the manifest. */
export function recordFiles(dir: string, names: string[]): Record<string, FileRecord> {
  const out: Record<string, FileRecord> = {};
  for (const name of names) {
    const path = join(dir, name);
    out[name] = { bytes: statSync(path).size, sha256: sha256File(path) };
  }
  return out;
}

export function sha256File(path: string): string {
  const hash = createHash('sha256');
  const fd = openSync(path, 'r');
  const buf = Buffer.allocUnsafe(1 << 22);
  try {
    let pos = 0;
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
      pos += n;
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

export function dirBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const st = statSync(join(dir, name));
    if (st.isFile()) total += st.size;
  }
  return total;
}

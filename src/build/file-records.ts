import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { FileRecord } from '../index/manifest.js';
import { fingerprintFile } from '../index/file-integrity.js';

/** Size, sha256 and block hashes of every file an index consists of, for the manifest. */
export function recordFiles(dir: string, names: string[]): Record<string, FileRecord> {
  const out: Record<string, FileRecord> = {};
  for (const name of names) {
    const path = join(dir, name);
    out[name] = fingerprintFile(path);
  }
  return out;
}

export function dirBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const st = statSync(join(dir, name));
    if (st.isFile()) total += st.size;
  }
  return total;
}

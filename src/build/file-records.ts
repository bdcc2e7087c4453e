import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { FileRecord } from '../index/manifest.js';
import { fingerprintFiles } from '../index/file-integrity.js';

/** Size, sha256 and block hashes of every file an index consists of, for the manifest. */
export async function recordFiles(
  dir: string,
  names: string[],
  signal?: AbortSignal,
  onBytes?: (bytes: number) => void,
): Promise<Record<string, FileRecord>> {
  const records = await fingerprintFiles(
    names.map((name) => join(dir, name)),
    signal,
    onBytes,
  );
  return Object.fromEntries(names.map((name, i) => [name, records[i] as FileRecord]));
}

export function dirBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const st = statSync(join(dir, name));
    if (st.isFile()) total += st.size;
  }
  return total;
}

import { closeSync, existsSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { makeGenerator, type VectorKind } from './vectors.js';

/** Writes n generated vectors as .fbin (int32 n, int32 d, float32 rows) unless the file exists. */
export function ensureFbin(path: string, kind: VectorKind, n: number, dim: number, seed: number): void {
  if (existsSync(path)) return;
  mkdirSync(dirname(path), { recursive: true });
  const next = makeGenerator(kind, dim, seed);
  const fd = openSync(`${path}.tmp`, 'w');
  const head = Buffer.alloc(8);
  head.writeInt32LE(n, 0);
  head.writeInt32LE(dim, 4);
  writeSync(fd, head);
  const batch = 4096;
  const buf = new Float32Array(batch * dim);
  for (let i = 0; i < n; i += batch) {
    const m = Math.min(batch, n - i);
    for (let j = 0; j < m; j++) buf.set(next(), j * dim);
    const bytes = new Uint8Array(buf.buffer, 0, m * dim * 4);
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off);
  }
  closeSync(fd);
  renameSync(`${path}.tmp`, path);
}

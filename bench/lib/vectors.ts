import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { floatsToHalves } from '../../src/util/half.js';
import { prng } from './common.js';

/**
 * Synthetic embedding sets, raw little-endian float32 rows:
 *   clustered — a Gaussian mixture of 1000 components whose covariances have
 *     low rank (16 directions per component, scale 0.25) plus a little
 *     isotropic noise (sigma 0.005 per dimension), normalised. Real sentence
 *     embeddings lie near a low-dimensional manifold, so their neighbours are
 *     structured; cos(point, centre) ≈ 0.7.
 *   isotropic — the same mixture with full-rank noise (sigma 0.03 per
 *     dimension): inside a component the points are as unstructured as
 *     uniform random ones, a much harder case.
 *   uniform — uniformly random unit vectors, the hardest case for any ANN.
 */
export type VectorKind = 'clustered' | 'isotropic' | 'uniform';
const RANK = 16;

function gaussian(rand: () => number): () => number {
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const s = spare;
      spare = undefined;
      return s;
    }
    let u = 0;
    while (u === 0) u = rand();
    const v = rand();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}

function normalize(v: Float32Array): void {
  let s = 0;
  for (const x of v) s += x * x;
  const n = Math.sqrt(s) || 1;
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / n;
}

export function makeGenerator(kind: VectorKind, dim: number, seed: number, clusters = 1000): () => Float32Array {
  const rand = prng(seed);
  const g = gaussian(rand);
  const centers: Float32Array[] = [];
  const bases: Float32Array[] = [];
  if (kind !== 'uniform') {
    const crand = gaussian(prng(12345)); // the same components for corpus and queries
    for (let c = 0; c < clusters; c++) {
      const v = new Float32Array(dim);
      for (let d = 0; d < dim; d++) v[d] = crand();
      normalize(v);
      centers.push(v);
      if (kind === 'clustered') {
        const b = new Float32Array(dim * RANK);
        for (let i = 0; i < b.length; i++) b[i] = crand() / Math.sqrt(dim);
        bases.push(b);
      }
    }
  }
  const z = new Float32Array(RANK);
  return () => {
    const v = new Float32Array(dim);
    if (kind === 'uniform') for (let d = 0; d < dim; d++) v[d] = g();
    else {
      const k = Math.floor(rand() * clusters);
      const c = centers[k] as Float32Array;
      if (kind === 'isotropic') for (let d = 0; d < dim; d++) v[d] = (c[d] as number) + 0.03 * g();
      else {
        const b = bases[k] as Float32Array;
        for (let r = 0; r < RANK; r++) z[r] = 0.25 * g();
        for (let d = 0; d < dim; d++) {
          let s = c[d] as number;
          for (let r = 0; r < RANK; r++) s += (b[d * RANK + r] as number) * (z[r] as number);
          v[d] = s + 0.005 * g();
        }
      }
    }
    normalize(v);
    return v;
  };
}

/**
 * Writes n generated vectors to `path` unless it exists: raw float32 rows, or
 * with `fbin` the .fbin layout (int32 n, int32 d, then the rows).
 */
export function ensureVectors(
  path: string,
  kind: VectorKind,
  n: number,
  dim: number,
  seed: number,
  fbin = false,
): void {
  if (existsSync(path)) return;
  mkdirSync(dirname(path), { recursive: true });
  const next = makeGenerator(kind, dim, seed);
  const fd = openSync(`${path}.tmp`, 'w');
  if (fbin) {
    const head = Buffer.alloc(8);
    head.writeInt32LE(n, 0);
    head.writeInt32LE(dim, 4);
    writeSync(fd, head);
  }
  const batch = 4096;
  const buf = new Float32Array(batch * dim);
  for (let i = 0; i < n; i += batch) {
    const m = Math.min(batch, n - i);
    for (let j = 0; j < m; j++) buf.set(next(), j * dim);
    const bytes = new Uint8Array(buf.buffer, 0, m * dim * 4);
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off);
    if (i % (batch * 64) === 0) process.stderr.write(`  ${path}: ${i}/${n}\n`);
  }
  closeSync(fd);
  // rename last so a half-written file is never mistaken for a finished one
  renameSync(`${path}.tmp`, path);
}

/** .fbin files (big-ann-benchmarks) start with u32 rows and u32 dim; raw .f32 files have no header. */
export function fbinHeaderBytes(path: string): number {
  return path.endsWith('.fbin') ? 8 : 0;
}

/** Rows of a raw float32 file; `headerBytes` skips a header (`fbinHeaderBytes`). */
export function readVectors(path: string, dim: number, from = 0, count?: number, headerBytes = 0): Float32Array {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const total = (size - headerBytes) / (dim * 4);
    if (!Number.isInteger(total)) {
      throw new Error(
        `${path}: ${size} bytes is not a whole number of ${dim}-d float32 rows after ${headerBytes} header bytes`,
      );
    }
    const n = Math.min(count ?? total - from, total - from);
    const out = new Float32Array(n * dim);
    const bytes = new Uint8Array(out.buffer);
    let got = 0;
    while (got < bytes.length) {
      const r = readSync(fd, bytes, got, Math.min(bytes.length - got, 1 << 30), headerBytes + from * dim * 4 + got);
      if (r === 0) break;
      got += r;
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

/** A NumPy v1.0 header for a C-order (n, dim) matrix of `descr` ('<f2', '<f4'), padded to 64 bytes. */
export function npyHeader(descr: string, n: number, dim: number): Buffer {
  const dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${n}, ${dim}), }`;
  const pad = 64 - ((10 + dict.length + 1) % 64);
  const text = `${dict}${' '.repeat(pad % 64)}\n`;
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(text.length, 8);
  return Buffer.concat([head, Buffer.from(text, 'latin1')]);
}

/**
 * Writes n generated vectors to `path` as a float16 .npy unless it exists, in a stream (21M × 768
 * is 32 GB as f16: a float32 file of that size, FAISS's or .fbin, would not fit a 250 GB disk beside
 * the index). The same seed gives the same rows as `ensureVectors`, so a prefix of a larger file is
 * the smaller set.
 */
export function ensureNpyF16(path: string, kind: VectorKind, n: number, dim: number, seed: number): void {
  if (existsSync(path)) return;
  mkdirSync(dirname(path), { recursive: true });
  const next = makeGenerator(kind, dim, seed);
  const fd = openSync(`${path}.tmp`, 'w');
  writeSync(fd, npyHeader('<f2', n, dim));
  const batch = 4096;
  const half = new Uint16Array(batch * dim);
  const started = Date.now();
  for (let i = 0; i < n; i += batch) {
    const m = Math.min(batch, n - i);
    for (let j = 0; j < m; j++) floatsToHalves(next(), half.subarray(j * dim, (j + 1) * dim));
    const bytes = new Uint8Array(half.buffer, 0, m * dim * 2);
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off);
    if (i % (batch * 256) === 0) {
      const s = (Date.now() - started) / 1000;
      process.stderr.write(`  ${path}: ${i}/${n} in ${s.toFixed(0)} s\n`);
    }
  }
  closeSync(fd);
  renameSync(`${path}.tmp`, path);
}

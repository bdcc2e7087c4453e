import { readFileSync, writeFileSync } from 'node:fs';
import { TEST_ANN } from '../helpers/ann.js';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDensePhase } from '../../src/build/dense-phase.js';
import type { Encoder } from '../../src/encoder/encoder.js';
import { openVectorSource } from '../../src/index/dense/vector-source.js';
import { INDEX_FILES } from '../../src/index/layout.js';
import { build, writeJsonl } from '../helpers/build.js';
import { openTinyEncoder } from '../helpers/encoder.js';
import { HAS_SHARED, makeTempDir, REPO_ROOT } from '../helpers/paths.js';

const FIX = join(REPO_ROOT, 'test', 'fixtures');
const X = Array.from({ length: 40 }, (_, i) => i / 40);

describe('vector files written by faiss and numpy', () => {
  it.each(['faiss-flat-ip-5x8.index', 'faiss-flat-l2-5x8.index', 'numpy-f4-5x8.npy'])('reads %s exactly', (f) => {
    const src = openVectorSource(join(FIX, f));
    try {
      expect([src.count, src.dim]).toEqual([5, 8]);
      expect(Array.from(src.read(0, 5))).toEqual(X.map((v) => Math.fround(v)));
      expect(Array.from(src.read(3, 1))).toEqual(X.slice(24, 32).map((v) => Math.fround(v)));
    } finally {
      src.close();
    }
  });

  it('reads float16 .npy within half precision', () => {
    const src = openVectorSource(join(FIX, 'numpy-f2-5x8.npy'));
    Array.from(src.read(0, 5)).forEach((v, i) => expect(Math.abs(v - X[i]!)).toBeLessThan(1e-3));
    src.close();
  });

  it('names the problem for non-flat, truncated or unknown files', () => {
    expect(() => openVectorSource(join(FIX, 'faiss-hnsw-5x8.index'))).toThrow(/only flat indexes/);
    const tmp = makeTempDir();
    try {
      const cut = join(tmp.dir, 'cut.index');
      writeFileSync(cut, readFileSync(join(FIX, 'faiss-flat-ip-5x8.index')).subarray(0, 120));
      expect(() => openVectorSource(cut)).toThrow(/truncated/);
      expect(() => openVectorSource(join(tmp.dir, 'v.bin'))).toThrow(/cannot tell the format/);
    } finally {
      tmp.cleanup();
    }
  });
});

describe.skipIf(!HAS_SHARED)('build-index with imported vectors', () => {
  const tmp = makeTempDir();
  const PASSAGES = Array.from({ length: 50 }, (_, i) => ({
    id: String(i),
    contents: `"P${i}"\npassage ${i} about item ${i % 7}`,
  }));
  let enc: Encoder;
  let input: string;
  let vectors: Float32Array[];
  beforeAll(async () => {
    enc = await openTinyEncoder();
    input = writeJsonl(tmp.dir, 'c.jsonl', PASSAGES);
    vectors = await enc.embedPassages(PASSAGES.map((p) => p.contents));
  });
  afterAll(async () => {
    await enc?.close();
    tmp.cleanup();
  });

  function writeNpy(path: string, rows: Float32Array[]): string {
    const dim = rows[0]!.length;
    let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${rows.length}, ${dim}), }`;
    header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
    const head = Buffer.alloc(10);
    head.write('\x93NUMPY', 0, 'latin1');
    head[6] = 1;
    head.writeUInt16LE(header.length, 8);
    const data = new Float32Array(rows.length * dim);
    rows.forEach((r, i) => data.set(r, i * dim));
    writeFileSync(path, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer)]));
    return path;
  }

  const importBuild = (name: string, path: string, spotCheck = 0, over: { input?: string; exactBelow?: number } = {}) =>
    build({
      name,
      input: over.input ?? input,
      format: 'wiki18',
      indexDir: join(tmp.dir, 'idx'),
      dense: createDensePhase({
        encoder: enc,
        source: { kind: 'local', path: '/m' },
        vectorsDtype: 'f32',
        ann: TEST_ANN,
        exactBelow: over.exactBelow ?? 1000,
        annThreads: 1,
        importFrom: { path, spotCheck, minCosine: 0.99 },
      }),
    });

  it('stores exactly the imported rows and passes the spot check when they match the encoder', async () => {
    await importBuild('imported', writeNpy(join(tmp.dir, 'v.npy'), vectors), 10);
    // the file's own bytes: a Buffer may be a view into a larger (pooled) ArrayBuffer
    const file = readFileSync(join(tmp.dir, 'idx', 'imported', INDEX_FILES.vectors));
    const stored = new Float32Array(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength));
    vectors.forEach((v, i) => v.forEach((x, d) => expect(Math.abs(stored[i * v.length + d]! - x)).toBeLessThan(1e-6)));
  });

  it('imports across many read-ahead batches: every row in place, normalised as it was read', async () => {
    const n = 20_001; // two full 8,192-row batches and a partial one
    const big = writeJsonl(
      tmp.dir,
      'big.jsonl',
      Array.from({ length: n }, (_, i) => ({ id: `b${i}`, contents: `"B${i}"\nrow ${i}` })),
    );
    const rows = Array.from({ length: n }, (_, i) =>
      Float32Array.from({ length: 32 }, (_, d) => Math.sin(i * 0.37 + d * 1.3) * (1 + (i % 5))),
    );
    await importBuild('many', writeNpy(join(tmp.dir, 'many.npy'), rows), 0, { input: big, exactBelow: 100_000 });
    const file = readFileSync(join(tmp.dir, 'idx', 'many', INDEX_FILES.vectors));
    const stored = new Float32Array(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength));
    expect(stored.length).toBe(n * 32);
    for (const i of [0, 1, 8191, 8192, 8193, 16_383, 16_384, 20_000]) {
      const v = rows[i]!;
      const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
      v.forEach((x, d) => expect(stored[i * 32 + d]).toBe(Math.fround(x / norm)));
    }
  });

  it('refuses vectors in another order (spot check), count or dimension', async () => {
    const shuffled = [...vectors.slice(1), vectors[0]!];
    await expect(importBuild('bad1', writeNpy(join(tmp.dir, 's.npy'), shuffled), 10)).rejects.toThrow(
      /disagree with .* lowest cosine/,
    );
    await expect(importBuild('bad2', writeNpy(join(tmp.dir, 'n.npy'), vectors.slice(0, 49)))).rejects.toThrow(
      /holds 49 vectors but the corpus has 50 chunks/,
    );
    const wide = vectors.map((v) => Float32Array.from([...v, 0]));
    await expect(importBuild('bad3', writeNpy(join(tmp.dir, 'w.npy'), wide))).rejects.toThrow(
      /33-d vectors but the encoder .* produces 32-d/,
    );
  });
});

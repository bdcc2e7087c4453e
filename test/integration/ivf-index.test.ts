import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDenseArm } from '../../src/index/dense/dense-arm.js';
import { buildIvf } from '../../src/index/dense/ivf-build.js';
import { encodeHeader, layout, listOffsets, payloadBytes, type IvfHeader } from '../../src/index/dense/ivf-format.js';
import { IvfIndex } from '../../src/index/dense/ivf-index.js';
import { VectorReader, VectorWriter } from '../../src/index/dense/vectors-file.js';
import type { DenseManifest } from '../../src/index/manifest.js';
import { makeTempDir } from '../helpers/paths.js';

// The IVF index of 1-bit codes (issue 56) at small sizes, on clustered vectors: exactly the exact
// search at full effort, the same after reopening, refused when damaged, stoppable and resumable.
const tmp = makeTempDir();
afterAll(tmp.cleanup);

/** A seeded mixture of `clusters` Gaussian blobs on the unit sphere, as real embeddings cluster. */
function clustered(n: number, dim: number, seed: number, clusters = 20): Float32Array[] {
  let s = seed >>> 0;
  const rand = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const gauss = (): number => Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());
  let c = 99;
  const crand = (): number => {
    c = (c * 16807) % 2147483647;
    return c / 2147483647 - 0.5;
  };
  const centres = Array.from({ length: clusters }, () => Float32Array.from({ length: dim }, crand));
  return Array.from({ length: n }, () => {
    const centre = centres[Math.floor(rand() * clusters)] as Float32Array;
    const v = Float32Array.from(centre, (x) => x + 0.08 * gauss());
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

const N = 3000;
const DIM = 100; // not a multiple of 8: the codes pad it
const LISTS = 32;
const vectors = clustered(N, DIM, 7);
const queries = clustered(40, DIM, 8);
let vecPath: string;

function manifest(ann: DenseManifest['ann'], dtype: 'f32' | 'f16' = 'f32'): DenseManifest {
  return {
    encoder: {
      id: 'test',
      model: 'test',
      variant: 'fp32',
      model_sha256: '',
      dim: DIM,
      query_prefix: '',
      passage_prefix: '',
      pooling: 'mean',
      normalize: true,
      max_length: 512,
      source: { kind: 'local', path: '/x' },
    },
    vectors: { dtype, count: N },
    ann,
  };
}
const ivfAnn = (probes: number, rescore: number): DenseManifest['ann'] => ({
  library: 'retriever-mcp',
  kind: 'ivf-rabitq',
  metric: 'cos',
  lists: LISTS,
  bits: 1,
  probes,
  rescore,
});

beforeAll(async () => {
  vecPath = join(tmp.dir, 'vectors.bin');
  const w = new VectorWriter(vecPath, DIM, 'f32', false);
  w.append(vectors);
  w.close();
  const r = new VectorReader(vecPath, DIM, 'f32', N);
  await buildIvf(r, join(tmp.dir, 'dense.ivf'), { lists: LISTS, threads: 1 });
  r.close();
}, 120_000);

/**
 * The same index written in format 1 (no <r, c> a vector; codes read against the whole query), as
 * servers before format 2 built it: every region copied, each list's payload less its <r, c>.
 */
function toVersion1(v2: Buffer): Buffer {
  const h = JSON.parse(v2.toString('utf8', 12, 12 + v2.readUInt32LE(8))) as IvfHeader;
  const sizes = new Uint32Array(v2.buffer.slice(v2.byteOffset + h.sizesAt, v2.byteOffset + h.sizesAt + h.lists * 4));
  const h1 = layout(h.dim, h.rounds, h.coarse, sizes, 1);
  const out = Buffer.alloc(h1.fileBytes);
  encodeHeader(h1).copy(out, 0);
  const region = (from: number, to: number, bytes: number): void => void v2.copy(out, to, from, from + bytes);
  region(h.centroidsAt, h1.centroidsAt, h.lists * h.dimPadded * 4);
  region(h.coarseAt, h1.coarseAt, h.coarse * h.dimPadded * 4);
  region(h.childrenAt, h1.childrenAt, (h.coarse + 1) * 4);
  region(h.signsAt, h1.signsAt, h.rounds * h.dimPadded * 4);
  region(h.sizesAt, h1.sizesAt, h.lists * 4);
  const o2 = listOffsets(h, sizes);
  const o1 = listOffsets(h1, sizes);
  Buffer.from(o1.buffer).copy(out, h1.offsetsAt);
  sizes.forEach((n, l) => {
    const keep = Math.ceil(n / 16) * (h.dimPadded / 8) * 16 + n * 8;
    expect(payloadBytes(n, h.dimPadded, 1)).toBeGreaterThanOrEqual(keep);
    region(o2[l] as number, o1[l] as number, keep);
  });
  return out;
}

describe('IVF index of 1-bit codes', () => {
  it("reads format 1 too; format 2 (codes read against the query's residual) ranks better where vectors share a direction, as e5's do", async () => {
    // e5-like: every vector leans on one common direction, so a query's share along it is large
    // and, read against the whole query, widens every estimate's error
    const common = clustered(1, DIM, 11, 1)[0] as Float32Array;
    const lean = (vs: Float32Array[]): Float32Array[] =>
      vs.map((v) => {
        const x = v.map((a, d) => 0.35 * a + (common[d] as number));
        const norm = Math.hypot(...x);
        return x.map((a) => a / norm);
      });
    const docs = lean(clustered(N, DIM, 21));
    const qs = lean(clustered(60, DIM, 22));
    const dir = join(tmp.dir, 'lean');
    const path = join(dir, 'vectors.bin');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir, { recursive: true });
    const w = new VectorWriter(path, DIM, 'f32', false);
    w.append(docs);
    w.close();
    const r = new VectorReader(path, DIM, 'f32', N);
    await buildIvf(r, join(dir, 'v2.ivf'), { lists: LISTS, threads: 1 });
    r.close();
    writeFileSync(join(dir, 'v1.ivf'), toVersion1(readFileSync(join(dir, 'v2.ivf'))));
    const exact = openDenseArm(dir, manifest(null), 'rebuild', { mmap: false, rescoreFactor: 4 });
    const v1 = new IvfIndex(join(dir, 'v1.ivf'), { dim: DIM, count: N }, 'rebuild');
    const v2 = new IvfIndex(join(dir, 'v2.ivf'), { dim: DIM, count: N }, 'rebuild');
    try {
      expect([v1.head.version, v2.head.version]).toEqual([1, 2]);
      const found = (ix: IvfIndex, candidates: number): number => {
        let hit = 0;
        for (const q of qs) {
          const truth = exact.search(q, 10).map((h) => h.num);
          const got = new Set(ix.candidates(q, LISTS, candidates));
          hit += truth.filter((t) => got.has(t)).length;
        }
        return hit / (qs.length * 10);
      };
      // every candidate: both formats hold the true top 10 (the codes choose nothing)
      expect(found(v1, N)).toBe(1);
      expect(found(v2, N)).toBe(1);
      // 40 candidates of 3,000 chosen by the estimate alone
      const [one, two] = [found(v1, 40), found(v2, 40)];
      expect(two, `format 1 ${one}, format 2 ${two}`).toBeGreaterThan(one + 0.2);
    } finally {
      exact.close();
      v1.close();
      v2.close();
    }
  });

  it('at full effort (every list, every vector re-scored) answers exactly as exact search', () => {
    const exact = openDenseArm(tmp.dir, manifest(null), 'rebuild', { mmap: false, rescoreFactor: 4 });
    const ivf = openDenseArm(tmp.dir, manifest(ivfAnn(LISTS, N)), 'rebuild', { mmap: false, rescoreFactor: 4 });
    try {
      for (const q of queries) expect(ivf.search(q, 10)).toEqual(exact.search(q, 10));
    } finally {
      exact.close();
      ivf.close();
    }
  });

  it('at a few lists and a hundred candidates still finds nearly all of the true top 10', () => {
    const exact = openDenseArm(tmp.dir, manifest(null), 'rebuild', { mmap: false, rescoreFactor: 4 });
    const ivf = openDenseArm(tmp.dir, manifest(ivfAnn(4, 100)), 'rebuild', { mmap: true, rescoreFactor: 4 });
    try {
      let hit = 0;
      for (const q of queries) {
        const truth = new Set(exact.search(q, 10).map((h) => h.num));
        hit += ivf.search(q, 10).filter((h) => truth.has(h.num)).length;
      }
      expect(hit / (queries.length * 10)).toBeGreaterThan(0.9);
      expect(ivf.description).toMatch(/IVF of 1-bit codes, 32 lists, 4 probed, 100 re-scored/);
    } finally {
      exact.close();
      ivf.close();
    }
  });

  it('re-scores highest bound first and stops where no candidate can enter: the top 10 of every candidate, fewer read', () => {
    const ix = new IvfIndex(join(tmp.dir, 'dense.ivf'), { dim: DIM, count: N }, 'rebuild');
    const rows = new VectorReader(vecPath, DIM, 'f32', N);
    const arm = openDenseArm(tmp.dir, manifest(ivfAnn(8, 400)), 'rebuild', { mmap: true, rescoreFactor: 4 });
    try {
      let read = 0;
      let above = 0;
      for (const q of queries) {
        const cand = ix.bounded(q, 8, 400);
        expect(cand).toHaveLength(400);
        // the bound holds: a candidate's exact score is at most its upper bound
        const exact = cand.map((c) => ({ num: c.num, score: rows.dotRow(c.num, q), upper: c.upper }));
        above += exact.filter((c) => c.score > c.upper).length;
        const all = exact
          .sort((a, b) => b.score - a.score || a.num - b.num)
          .slice(0, 10)
          .map((c) => c.num);
        expect(arm.search(q, 10).map((h) => h.num)).toEqual(all);
        read += arm.lastRescored ?? NaN;
      }
      expect(above / (queries.length * 400)).toBeLessThan(0.005);
      expect(read / queries.length).toBeLessThan(200);
    } finally {
      ix.close();
      rows.close();
      arm.close();
    }
  });

  it('reopened from its file, it answers the same, its lists read as they are probed or held in memory', () => {
    const a = new IvfIndex(join(tmp.dir, 'dense.ivf'), { dim: DIM, count: N }, 'rebuild');
    const before = queries.map((q) => a.candidates(q, 6, 50));
    expect(a.inMemory).toBe(false);
    a.close();
    const b = new IvfIndex(join(tmp.dir, 'dense.ivf'), { dim: DIM, count: N }, 'rebuild');
    const held = new IvfIndex(join(tmp.dir, 'dense.ivf'), { dim: DIM, count: N }, 'rebuild', { inMemory: true });
    // lists too large to hold are read per query instead, with the same answers
    const over = new IvfIndex(join(tmp.dir, 'dense.ivf'), { dim: DIM, count: N }, 'rebuild', {
      inMemory: true,
      maxHeldBytes: 1024,
    });
    try {
      expect(queries.map((q) => b.candidates(q, 6, 50))).toEqual(before);
      expect(b.lists).toBe(LISTS);
      expect(held.inMemory).toBe(true);
      expect(queries.map((q) => held.candidates(q, 6, 50))).toEqual(before);
      expect(over.inMemory).toBe(false);
      expect(queries.map((q) => over.candidates(q, 6, 50))).toEqual(before);
      // within a filter too, and at every list
      const nums = Uint32Array.from({ length: N / 3 }, (_, i) => i * 3);
      const bits = new Uint8Array(Math.ceil(N / 8));
      for (const n of nums) bits[n >>> 3] = (bits[n >>> 3] as number) | (1 << (n & 7));
      const filter = { bits, nums };
      expect(queries.map((q) => held.candidates(q, LISTS, 40, filter))).toEqual(
        queries.map((q) => b.candidates(q, LISTS, 40, filter)),
      );
    } finally {
      b.close();
      held.close();
      over.close();
    }
    const arm = openDenseArm(tmp.dir, manifest(ivfAnn(6, 50)), 'rebuild', { mmap: false, rescoreFactor: 4 });
    try {
      expect(arm.description).toMatch(/IVF of 1-bit codes held in memory, 32 lists, 6 probed/);
    } finally {
      arm.close();
    }
  });

  it('refuses a damaged or foreign file, naming it and the fix', () => {
    const good = readFileSync(join(tmp.dir, 'dense.ivf'));
    const headerEnd = 12 + good.readUInt32LE(8);
    const damage: Array<[string, (b: Buffer) => Buffer, RegExp]> = [
      ['magic', (b) => (b.write('XXXX', 0, 'latin1'), b), /no IVF magic/],
      ['truncated', (b) => b.subarray(0, b.length - 64), /bytes, its header says/],
      ['header', (b) => (b.write('{', 12 + 5, 'latin1'), b), /is not a usable IVF index .*: rebuild it/],
      ['version', (b) => (b.write('"version":9', b.indexOf('"version":'), 'latin1'), b), /version 9/],
    ];
    for (const [what, mutate, msg] of damage) {
      const path = join(tmp.dir, `bad-${what}.ivf`);
      writeFileSync(path, mutate(Buffer.from(good)));
      expect(() => new IvfIndex(path, { dim: DIM, count: N }, 'rebuild it'), what).toThrow(msg);
    }
    // a list table that no longer adds up
    const h = JSON.parse(good.toString('utf8', 12, headerEnd)) as { sizesAt: number; signsAt: number };
    const sizes = Buffer.from(good);
    sizes.writeUInt32LE(sizes.readUInt32LE(h.sizesAt) + 1, h.sizesAt);
    writeFileSync(join(tmp.dir, 'bad-sizes.ivf'), sizes);
    expect(() => new IvfIndex(join(tmp.dir, 'bad-sizes.ivf'), { dim: DIM, count: N }, 'rebuild it')).toThrow(
      /INDEX_CORRUPT|not where its size puts it|do not add up/,
    );
    const signs = Buffer.from(good);
    signs.writeFloatLE(0.5, h.signsAt);
    writeFileSync(join(tmp.dir, 'bad-signs.ivf'), signs);
    expect(() => new IvfIndex(join(tmp.dir, 'bad-signs.ivf'), { dim: DIM, count: N }, 'rebuild it')).toThrow(
      /rotation sign is not ±1/,
    );
    // the manifest's shape must be the file's
    expect(() => new IvfIndex(join(tmp.dir, 'dense.ivf'), { dim: DIM, count: N + 1 }, 'rebuild it')).toThrow(
      /100-d × 3000, the manifest says 100-d × 3001\): rebuild it/,
    );
  });

  it('stops at a signal, and a resumed build writes the bytes an uninterrupted one does', async () => {
    const r = new VectorReader(vecPath, DIM, 'f32', N);
    const path = join(tmp.dir, 'stopped.ivf');
    const stop = new AbortController();
    try {
      await expect(
        buildIvf(r, path, {
          lists: LISTS,
          threads: 1,
          signal: stop.signal,
          onProgress: (step, done) => {
            if (step === 'encode' && done > 0) stop.abort(new Error('stopped by the test'));
          },
        }),
      ).rejects.toThrow('stopped by the test');
      await buildIvf(r, path, { lists: LISTS, threads: 1, resume: true });
    } finally {
      r.close();
    }
    expect(readFileSync(path).equals(readFileSync(join(tmp.dir, 'dense.ivf')))).toBe(true);
  });

  it('builds the same bytes on two threads as on one', async () => {
    const r = new VectorReader(vecPath, DIM, 'f32', N);
    try {
      await buildIvf(r, join(tmp.dir, 'two.ivf'), { lists: LISTS, threads: 2 });
    } finally {
      r.close();
    }
    expect(readFileSync(join(tmp.dir, 'two.ivf')).equals(readFileSync(join(tmp.dir, 'dense.ivf')))).toBe(true);
  });

  it('searches within a filter: only allowed chunks, scanning more lists, exactly where few are allowed', () => {
    const arm = openDenseArm(tmp.dir, manifest(ivfAnn(8, 200)), 'rebuild', { mmap: false, rescoreFactor: 4 });
    try {
      for (const every of [2, 6]) {
        const allowed = Uint32Array.from({ length: Math.floor(N / every) }, (_, i) => i * every);
        const bits = new Uint8Array(Math.ceil(N / 8));
        for (const n of allowed) bits[n >>> 3] = (bits[n >>> 3] as number) | (1 << (n & 7));
        const hits = arm.search(queries[0] as Float32Array, 10, { bits, nums: allowed });
        expect(hits).toHaveLength(10);
        for (const h of hits) expect(h.num % every).toBe(0);
      }
    } finally {
      arm.close();
    }
  });
});

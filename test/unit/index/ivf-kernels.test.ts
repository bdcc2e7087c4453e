import { describe, expect, it } from 'vitest';
import { IvfKernels } from '../../../src/index/dense/ivf-kernels.js';

// The IVF index's WebAssembly kernels against plain TypeScript: the query tables and the scan
// give each code's sum over its set bits to within the tables' rounding, the estimate is the
// formula ivf-index.ts states, and the residuals are q − c with <c, q>.
const DIM = 64;

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

describe('IVF kernels', () => {
  const rand = seeded(7);
  const kernels = new IvfKernels(DIM, DIM, 1, new Float32Array(DIM).fill(1), 4);

  it('tables and scan give Σ over each code’s set bits to within half a step per four coordinates', () => {
    const n = 40;
    const blocks = Math.ceil(n / 16);
    const codes = Array.from({ length: n }, () => Uint8Array.from({ length: DIM / 8 }, () => (rand() * 256) | 0));
    for (let trial = 0; trial < 20; trial++) {
      const qr = Float32Array.from({ length: DIM }, () => (rand() - 0.5) * (trial + 1));
      const t = kernels.tables(qr);
      expect(t.qsum).toBeCloseTo(
        qr.reduce((a, b) => a + b, 0),
        4,
      );
      // codes in blocks of 16: row p of a block holds byte p of each of its 16 codes
      const pairs = DIM / 8;
      const view = kernels.work(blocks * pairs * 16);
      view.fill(0);
      codes.forEach((c, i) => {
        const b = Math.floor(i / 16);
        for (let p = 0; p < pairs; p++) view[b * pairs * 16 + p * 16 + (i % 16)] = c[p] as number;
      });
      const sums = kernels.scan(kernels.workAddress, blocks);
      codes.forEach((c, i) => {
        let exact = 0;
        for (let d = 0; d < DIM; d++) if (((c[d >> 3] as number) >> (d & 7)) & 1) exact += qr[d] as number;
        const got = t.delta * (sums[i] as number) + t.base;
        expect(Math.abs(got - exact)).toBeLessThanOrEqual((DIM / 4) * (t.delta / 2) + 1e-4 * (trial + 1));
      });
    }
  });

  it('estimates by the stated formula, and keeps exactly those reaching the floor', () => {
    const n = 50;
    const blocks = Math.ceil(n / 16);
    const pairs = DIM / 8;
    // a list payload as ivf-index.ts reads it: codes, then factors, then nums, then <r, c>
    const codeBytes = blocks * pairs * 16;
    const view = kernels.work(codeBytes + n * 12);
    for (let i = 0; i < codeBytes; i++) view[i] = (rand() * 256) | 0;
    const factors = Float32Array.from({ length: n }, () => rand());
    const along = Float32Array.from({ length: n }, () => rand() - 0.5);
    view.set(new Uint8Array(factors.buffer), codeBytes);
    view.set(new Uint8Array(along.buffer), codeBytes + n * 8);
    kernels.tables(Float32Array.from({ length: DIM }, () => rand() - 0.5));
    const sums = kernels.scan(kernels.workAddress, blocks).slice(0, n);
    const t = { delta: 0.01, base: -0.3, qsum: 0.2, cq: 0.7 };
    const est = (i: number, withAlong: boolean): number =>
      t.cq +
      (withAlong ? (along[i] as number) : 0) +
      (factors[i] as number) * (2 * (t.delta * (sums[i] as number) + t.base) - t.qsum);
    for (const withAlong of [true, false]) {
      const all = Array.from({ length: n }, (_, i) => est(i, withAlong));
      const floor = [...all].sort((a, b) => b - a)[9] as number;
      const tail = kernels.workAddress + codeBytes;
      const got = kernels.estimate(n, tail, withAlong ? tail + n * 8 : 0, { ...t, floor });
      const want = all.map((e, i) => [i, e] as const).filter(([, e]) => e >= floor);
      expect([...got.keep]).toEqual(want.map(([i]) => i));
      expect([...got.est]).toEqual(want.map(([, e]) => e));
      expect(want.length).toBeGreaterThanOrEqual(10);
    }
  });

  it('gives each list’s residual q − c, rotated, and <c, q>', () => {
    const means = Float32Array.from({ length: 5 * DIM }, () => rand() - 0.5);
    const other = new IvfKernels(DIM, DIM, 1, new Float32Array(DIM).fill(1), 4);
    const r = other.resident(means);
    const q = Float32Array.from({ length: DIM }, () => rand() - 0.5);
    const lists = Uint32Array.of(3, 0, 4);
    const got = other.listsOfQuery(q, lists, r.at, true);
    const dotsOnly = other.listsOfQuery(q, lists, r.at, false);
    expect([...dotsOnly.dots]).toEqual([...got.dots]);
    expect(dotsOnly.rotated).toHaveLength(0);
    lists.forEach((l, j) => {
      const residual = q.map((x, d) => x - (means[l * DIM + d] as number));
      other.rotate(residual);
      for (let d = 0; d < DIM; d++) expect(got.rotated[j * DIM + d]).toBeCloseTo(residual[d] as number, 5);
      let dot = 0;
      for (let d = 0; d < DIM; d++) dot += (means[l * DIM + d] as number) * (q[d] as number);
      expect(got.dots[j]).toBeCloseTo(dot, 6);
    });
  });
});

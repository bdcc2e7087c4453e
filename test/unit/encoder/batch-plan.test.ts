import { describe, expect, it } from 'vitest';
import { planBatches } from '../../../src/encoder/batch-plan.js';
import { batchPadding } from '../../../src/cli/shared-options.js';

function batchesOf(lengths: number[], size: number, pad: number): number[][] {
  const out: number[][] = [];
  let start = 0;
  for (const end of planBatches(lengths, size, pad)) {
    out.push(lengths.slice(start, end));
    start = end;
  }
  return out;
}

describe('planBatches (encoder batches of similar length)', () => {
  it('keeps equal lengths together up to the batch size', () => {
    expect(batchesOf([12, 12, 12, 12, 12], 2, 1.1)).toEqual([[12, 12], [12, 12], [12]]);
  });

  it('cuts where the next text would pad the batch past the ratio', () => {
    // 3 × 11 = 33 ≤ 1.1 × 31 = 34.1 keeps 11 with 10s; 4 × 20 = 80 > 1.1 × 51 cuts before 20
    expect(batchesOf([10, 10, 11, 20, 21, 60], 64, 1.1)).toEqual([[10, 10, 11], [20, 21], [60]]);
  });

  it('with an unbounded ratio, is fixed-size slicing (one batch padded to its longest)', () => {
    expect(batchesOf([9, 30, 155], 64, Infinity)).toEqual([[9, 30, 155]]);
    expect(planBatches([], 64, 1.1)).toEqual([]);
  });

  it('holds its bounds on random sorted lengths, and every cut is forced', () => {
    let seed = 3;
    const rnd = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let trial = 0; trial < 200; trial++) {
      const n = 1 + Math.floor(rnd() * 120);
      const lengths = Array.from({ length: n }, () => 3 + Math.floor(rnd() * rnd() * 200)).sort((a, b) => a - b);
      const size = 1 + Math.floor(rnd() * 64);
      const pad = 1 + rnd();
      const batches = batchesOf(lengths, size, pad);
      expect(batches.flat()).toEqual(lengths);
      batches.forEach((b, i) => {
        const real = b.reduce((s, x) => s + x, 0);
        const longest = b.at(-1) as number;
        expect(b.length).toBeLessThanOrEqual(size);
        if (b.length > 1) expect(b.length * longest).toBeLessThanOrEqual(pad * real + 1e-9);
        const next = batches[i + 1]?.[0];
        if (next !== undefined) {
          // the first text of the next batch could not have joined this one
          const full = b.length + 1 > size;
          const tooPadded = (b.length + 1) * next > pad * (real + next);
          expect(full || tooPadded).toBe(true);
        }
      });
    }
  });
});

describe('--batch-padding', () => {
  it('takes 0 as no limit and a ratio of at least 1, and names the flag when refusing anything else', () => {
    expect(batchPadding(0)).toBe(Infinity);
    expect(batchPadding(1)).toBe(1);
    expect(batchPadding(1.1)).toBe(1.1);
    for (const bad of [0.5, -1, Number.NaN, Infinity]) {
      expect(() => batchPadding(bad)).toThrow(/--batch-padding must be 0 \(no limit\) or a ratio of at least 1/);
    }
  });
});

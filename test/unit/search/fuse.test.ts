import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuseRrf, type RankedList } from '../../../src/search/fuse.js';

const idOf = (num: number): string => `c${String(num).padStart(4, '0')}`;

/** The definition, written as plainly as possible. */
function naiveRrf(
  lists: RankedList[],
  k: number,
  topK: number,
  id: (num: number) => string = idOf,
): Array<{ num: number; score: number }> {
  const nums = new Set(lists.flatMap((l) => l.hits.map((h) => h.num)));
  const scored = [...nums].map((num) => {
    let score = 0;
    for (const l of [...lists].sort((a, b) => (a.arm < b.arm ? -1 : 1))) {
      const i = l.hits.findIndex((h) => h.num === num);
      if (i >= 0) score += (l.weight ?? 1) / (k + i + 1);
    }
    return { num, score };
  });
  scored.sort((a, b) => b.score - a.score || (id(a.num) < id(b.num) ? -1 : 1));
  return scored.slice(0, topK);
}

const list = (arm: string) =>
  fc
    .uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 40 })
    .map((nums): RankedList => ({ arm, hits: nums.map((num, i) => ({ num, score: 100 - i })) }));

describe('fuseRrf', () => {
  it('equals the naive definition (property)', () => {
    fc.assert(
      fc.property(
        list('bm25'),
        list('dense'),
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 1, max: 80 }),
        (a, b, k, topK) => {
          const got = fuseRrf([a, b], { k, topK, idOf });
          const want = naiveRrf([a, b], k, topK);
          expect(got.map((h) => h.num)).toEqual(want.map((h) => h.num));
          got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]!.score, 12));
        },
      ),
    );
  });

  it('orders ties by chunk id, not by internal number, and only looks up ids it needs (property)', () => {
    fc.assert(
      fc.property(list('bm25'), list('dense'), fc.integer({ min: 1, max: 80 }), fc.integer(), (a, b, topK, salt) => {
        // ids whose order has nothing to do with the numbers
        const scrambled = (num: number): string => `c${((num * 7919 + salt) >>> 0) % 10007}-${num}`;
        let lookups = 0;
        const counted = (num: number): string => (lookups++, scrambled(num));
        const got = fuseRrf([a, b], { k: 60, topK, idOf: counted });
        const want = naiveRrf([a, b], 60, topK, scrambled);
        expect(got.map((h) => h.num)).toEqual(want.map((h) => h.num));
        expect(lookups).toBeLessThanOrEqual(new Set([...a.hits, ...b.hits].map((h) => h.num)).size);
      }),
    );
  });

  it('does not depend on the order of the arms (property)', () => {
    fc.assert(
      fc.property(list('bm25'), list('dense'), list('sparse'), (a, b, c) => {
        const one = fuseRrf([a, b, c], { k: 60, topK: 50, idOf });
        const two = fuseRrf([c, a, b], { k: 60, topK: 50, idOf });
        expect(two).toEqual(one);
      }),
    );
  });

  it('keeps hits found by one arm only, with that arm rank alone', () => {
    const fused = fuseRrf(
      [
        {
          arm: 'bm25',
          hits: [
            { num: 1, score: 9 },
            { num: 2, score: 5 },
          ],
        },
        { arm: 'dense', hits: [{ num: 3, score: 0.9 }] },
      ],
      { k: 60, topK: 10, idOf },
    );
    const byNum = new Map(fused.map((f) => [f.num, f]));
    expect(byNum.get(2)?.ranks).toEqual({ bm25: 2 });
    expect(byNum.get(3)?.ranks).toEqual({ dense: 1 });
    expect(byNum.get(3)?.scores).toEqual({ dense: 0.9 });
  });

  it('handles empty arms and top_k larger than the union', () => {
    expect(
      fuseRrf(
        [
          { arm: 'bm25', hits: [] },
          { arm: 'dense', hits: [] },
        ],
        { k: 60, topK: 5, idOf },
      ),
    ).toEqual([]);
    const only = fuseRrf(
      [
        { arm: 'bm25', hits: [{ num: 4, score: 1 }] },
        { arm: 'dense', hits: [] },
      ],
      { k: 60, topK: 100, idOf },
    );
    expect(only).toEqual([{ num: 4, score: 1 / 61, ranks: { bm25: 1 }, scores: { bm25: 1 } }]);
  });

  it('breaks score ties by chunk id, whatever the input order', () => {
    // rank 1 in one arm each: equal scores
    const a = { arm: 'bm25', hits: [{ num: 9, score: 1 }] };
    const b = { arm: 'dense', hits: [{ num: 2, score: 1 }] };
    const ids = (num: number): string => (num === 9 ? 'a-first' : 'b-second');
    expect(fuseRrf([a, b], { k: 60, topK: 2, idOf: ids }).map((h) => h.num)).toEqual([9, 2]);
    expect(fuseRrf([b, a], { k: 60, topK: 2, idOf: ids }).map((h) => h.num)).toEqual([9, 2]);
  });

  it('applies per-arm weights', () => {
    const fused = fuseRrf(
      [
        { arm: 'bm25', hits: [{ num: 1, score: 1 }], weight: 1 },
        { arm: 'dense', hits: [{ num: 2, score: 1 }], weight: 2 },
      ],
      { k: 60, topK: 2, idOf },
    );
    expect(fused.map((h) => h.num)).toEqual([2, 1]);
    expect(fused[0]?.score).toBeCloseTo(2 / 61, 12);
  });
});

import { describe, expect, it } from 'vitest';
import { mrrAtK, ndcgAtK, recallAtK } from '../../../src/eval/metrics.js';

const rel = (ids: Record<string, number>) => new Map(Object.entries(ids));

describe('ranking metrics', () => {
  it('recall@k counts distinct relevant hits in the first k', () => {
    expect(recallAtK(['a', 'x', 'b', 'a'], rel({ a: 1, b: 1, c: 1 }), 2)).toBeCloseTo(1 / 3);
    expect(recallAtK(['a', 'x', 'b', 'a'], rel({ a: 1, b: 1, c: 1 }), 4)).toBeCloseTo(2 / 3);
    expect(recallAtK(['a'], rel({}), 1)).toBe(0);
  });

  it('MRR@k is the reciprocal rank of the first relevant hit', () => {
    expect(mrrAtK(['x', 'y', 'a'], rel({ a: 1 }), 10)).toBeCloseTo(1 / 3);
    expect(mrrAtK(['x', 'y', 'a'], rel({ a: 1 }), 2)).toBe(0);
  });

  it('nDCG@k matches a hand computation with graded gains', () => {
    // ranked: b(1) a(2) x(0); ideal: a(2) b(1)
    const dcg = 1 / Math.log2(2) + 2 / Math.log2(3);
    const idcg = 2 / Math.log2(2) + 1 / Math.log2(3);
    expect(ndcgAtK(['b', 'a', 'x'], rel({ a: 2, b: 1 }), 10)).toBeCloseTo(dcg / idcg, 10);
    expect(ndcgAtK(['a', 'b'], rel({ a: 2, b: 1 }), 10)).toBeCloseTo(1, 10);
  });
});

import { describe, expect, it } from 'vitest';
import { TopK } from '../../../src/core/top-k.js';

describe('TopK', () => {
  it('keeps the k best, ties to the smaller id, and carries each hit’s extra through every move', () => {
    let s = 12345;
    const rand = (): number => {
      s = (s * 16807) % 2147483647;
      return s / 2147483647;
    };
    const items = Array.from({ length: 2000 }, (_, num) => ({ num, score: Math.round(rand() * 500) / 10 }));
    const top = new TopK(37);
    for (const x of items) if (top.accepts(x.score, x.num)) top.push(x.score, x.num, x.num * 3 + 0.5);
    const want = [...items].sort((a, b) => b.score - a.score || a.num - b.num).slice(0, 37);
    expect(top.result()).toEqual(want);
    const entries = top.entries().sort((a, b) => b.score - a.score || a.num - b.num);
    expect(entries.map((e) => e.num)).toEqual(want.map((w) => w.num));
    for (const e of entries) expect(e.extra).toBe(e.num * 3 + 0.5);
    expect(top.threshold()).toBe(want[36]?.score);
  });
});

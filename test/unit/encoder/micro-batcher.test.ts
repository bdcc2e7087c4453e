import { describe, expect, it } from 'vitest';
import { MicroBatcher } from '../../../src/encoder/micro-batcher.js';
import type { QueryEncoder } from '../../../src/core/contracts.js';

/** Our QueryEncoder interface, recording each batch it is asked for. */
function recordingEncoder(delayMs = 5): QueryEncoder & { batches: string[][]; fail?: boolean } {
  const enc = {
    id: 'fake',
    dim: 2,
    batches: [] as string[][],
    fail: false,
    async embedQueries(texts: string[]) {
      enc.batches.push([...texts]);
      await new Promise((r) => setTimeout(r, delayMs));
      if (enc.fail) throw new Error('encoder broke');
      return texts.map((t) => new Float32Array([t.length, 1]));
    },
  };
  return enc;
}

const opts = { maxBatch: 8, maxWaitMs: 5, maxQueue: 100, cacheSize: 0 };

describe('MicroBatcher', () => {
  it('gathers concurrent queries into few encoder batches and answers each in order', async () => {
    const enc = recordingEncoder();
    const sizes: number[] = [];
    const b = new MicroBatcher(enc, { ...opts, onBatch: (n) => sizes.push(n) });
    const texts = Array.from({ length: 20 }, (_, i) => `q${'x'.repeat(i)}`);
    const out = await Promise.all(texts.map((t) => b.embedQueries([t])));
    out.forEach((v, i) => expect(v[0]?.[0]).toBe(texts[i]!.length));
    expect(enc.batches.length).toBeLessThanOrEqual(4);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(8);
    expect(sizes.reduce((s, n) => s + n, 0)).toBe(20);
  });

  it('hands a batch back one waiter per event-loop turn, so I/O is served between their searches', async () => {
    const b = new MicroBatcher(recordingEncoder(), opts);
    // a ticker counts event-loop turns while the batch is released
    let turn = 0;
    let ticking = true;
    const tick = (): void => {
      turn++;
      if (ticking) setImmediate(tick);
    };
    tick();
    const turns: number[] = [];
    await Promise.all(Array.from({ length: 6 }, (_, i) => b.embedQueries([`t${i}`]).then(() => turns.push(turn))));
    ticking = false;
    expect(turns).toHaveLength(6);
    expect(new Set(turns).size).toBe(6); // all in one turn before: [n, n, n, n, n, n]
  });

  it('encodes identical texts once and serves repeats from its cache', async () => {
    const enc = recordingEncoder();
    const b = new MicroBatcher(enc, { ...opts, cacheSize: 10 });
    await Promise.all([b.embedQueries(['same']), b.embedQueries(['same']), b.embedQueries(['other', 'same'])]);
    expect(enc.batches.flat().sort()).toEqual(['other', 'same']);
    await b.embedQueries(['same']);
    expect(enc.batches).toHaveLength(1);
  });

  it('with maxBatch 1 sends every query alone (batching off)', async () => {
    const enc = recordingEncoder(1);
    const b = new MicroBatcher(enc, { ...opts, maxBatch: 1 });
    await Promise.all(['a', 'b', 'c'].map((t) => b.embedQueries([t])));
    expect(enc.batches).toEqual([['a'], ['b'], ['c']]);
  });

  it('refuses work beyond its queue bound at once, and recovers', async () => {
    const enc = recordingEncoder(20);
    const b = new MicroBatcher(enc, { ...opts, maxQueue: 5 });
    const first = b.embedQueries(['1', '2', '3', '4', '5']);
    await expect(b.embedQueries(['6'])).rejects.toMatchObject({ code: 'OVERLOADED' });
    await first;
    await expect(b.embedQueries(['7'])).resolves.toHaveLength(1);
  });

  it('passes encoder failures to every waiter of that batch and keeps working', async () => {
    const enc = recordingEncoder();
    const b = new MicroBatcher(enc, opts);
    enc.fail = true;
    const r = await Promise.allSettled([b.embedQueries(['a']), b.embedQueries(['b'])]);
    expect(r.map((x) => x.status)).toEqual(['rejected', 'rejected']);
    enc.fail = false;
    await expect(b.embedQueries(['c'])).resolves.toHaveLength(1);
  });
});

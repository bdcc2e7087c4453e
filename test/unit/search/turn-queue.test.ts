import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { TurnQueue } from '../../../src/search/turn-queue.js';

// that a finished task's result is not kept is shown end to end: test/e2e/reliability-http.test.ts
// 'caches distinct top-100 results' aborts its 192 MB server heap when the queue keeps them
describe('TurnQueue', () => {
  it('runs tasks first come first served, one per event-loop turn', async () => {
    const q = new TurnQueue();
    const order: string[] = [];
    let immediates = 0;
    const tick = (): void => {
      immediates++;
      if (immediates < 50) setImmediate(tick);
    };
    setImmediate(tick);
    const seen: number[] = [];
    const done = Promise.all(
      ['a', 'b', 'c', 'd'].map((name) =>
        q.run(() => {
          order.push(name);
          seen.push(immediates);
          return name;
        }),
      ),
    );
    expect(await done).toEqual(['a', 'b', 'c', 'd']);
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    // other callbacks ran between any two tasks: never two tasks in one turn
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1] as number);
  });

  it('passes a thrown error to that task alone', async () => {
    const q = new TurnQueue();
    const bad = q.run(() => {
      throw new Error('boom');
    });
    const good = q.run(() => 7);
    await expect(bad).rejects.toThrow('boom');
    expect(await good).toBe(7);
  });

  it("gives a started request's steps their turns before new requests start (two lanes)", async () => {
    const q = new TurnQueue();
    const order: string[] = [];
    const started = q.admit(() => {
      order.push('start A');
      // A's next step is queued while B and C wait to start
      return { next: q.run(() => order.push('A step 2')) };
    });
    const b = q.admit(() => order.push('start B'));
    const c = q.admit(() => order.push('start C'));
    await (
      await started
    ).next;
    await Promise.all([b, c]);
    expect(order).toEqual(['start A', 'A step 2', 'start B', 'start C']);
  });

  it("runs each task in its submitter's async context, whoever scheduled the turn", async () => {
    // a request's answer lease lives in an AsyncLocalStorage: a start queued behind another's
    // once ran in the first one's context and so was metered against the wrong lease, or none
    const q = new TurnQueue();
    const store = new AsyncLocalStorage<string>();
    const seen = await Promise.all(
      ['a', 'b', 'c'].map((name) => store.run(name, () => q.admit(() => ({ name, saw: store.getStore() })))),
    );
    const outside = await q.run(() => ({ saw: store.getStore() }));
    expect(seen).toEqual([
      { name: 'a', saw: 'a' },
      { name: 'b', saw: 'b' },
      { name: 'c', saw: 'c' },
    ]);
    expect(outside.saw).toBeUndefined();
  });
});

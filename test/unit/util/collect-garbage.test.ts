import { getHeapSpaceStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../../src/util/collect-garbage.js';

const MiB = 2 ** 20;
const newSpaceBytes = (): number =>
  getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.physical_space_size ?? 0;
const major = Number(process.versions.node.split('.')[0]);

describe('collectGarbage', () => {
  it("frees what is dead and, on Node 22 and later, gives back the young generation's pages", () => {
    // a start-up's churn: many short-lived objects grow the semi-spaces
    let keep: unknown[] = [];
    for (let i = 0; i < 2_000_000; i++) {
      keep.push({ i, s: `x${i}` });
      if (keep.length > 100_000) keep = [];
    }
    keep = [];
    const grown = newSpaceBytes();
    // then what a load leaves dead on the heap (about 12 MiB); buffers outside it are freed by a
    // background sweeper, so they are not counted here
    let heapDead: unknown[] | undefined = Array.from({ length: 200_000 }, (_, i) => ({ i, s: `y${i}` }));
    const before = process.memoryUsage().heapUsed;
    expect(heapDead).toHaveLength(200_000);
    heapDead = undefined;
    collectGarbage();
    // other work in the process allocates too: the drop is asserted with room, not to the byte
    expect(process.memoryUsage().heapUsed).toBeLessThan(before - 4 * MiB);
    if (major >= 22) {
      expect(grown).toBeGreaterThan(4 * MiB);
      expect(newSpaceBytes()).toBeLessThanOrEqual(Math.max(2 * MiB, grown / 4));
    }
  });
});

import { readFileSync, writeFileSync } from 'node:fs';
import { TEST_ANN } from '../../helpers/ann.js';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AnnBuilder, AnnIndex, type AnnParams } from '../../../src/index/dense/ann.js';
import { GraphFormatError, readGraphLinks } from '../../../src/index/dense/graph-file.js';
import { orphanFirstBaseNode } from '../../helpers/graph-edit.js';
import { makeTempDir } from '../../helpers/paths.js';

const DIM = 16;
const N = 400;
const tmp = makeTempDir();
afterAll(() => tmp.cleanup());

function rows(n: number): Float32Array {
  const out = new Float32Array(n * DIM);
  for (let i = 0; i < n; i++) for (let d = 0; d < DIM; d++) out[i * DIM + d] = Math.sin((i + 1) * (d + 1));
  return out;
}
const ROWS = rows(N);
const row = (num: number): Float32Array => ROWS.slice(num * DIM, (num + 1) * DIM);

function saved(name: string, params: AnnParams): string {
  const b = new AnnBuilder(DIM, params);
  b.add(0, ROWS, 1);
  const path = join(tmp.dir, name);
  b.save(path);
  return path;
}

/** Whether a walk as wide as the graph finds `num` (USearch reading the same file). */
function reachable(path: string, params: AnnParams, num: number): boolean {
  const index = AnnIndex.open(path, DIM, params, { mmap: false, expansionSearch: N });
  return index.search(row(num), N).nums.includes(num);
}

describe('readGraphLinks (real USearch files)', () => {
  for (const quantization of ['f32', 'i8'] as const) {
    it(`reads the shape of a ${quantization} graph`, () => {
      const params: AnnParams = { ...TEST_ANN, connectivity: 12, quantization };
      const links = readGraphLinks(saved(`shape-${quantization}`, params));
      expect(links).toMatchObject({ nodes: N, deleted: 0, connectivity: 12, connectivityBase: 24 });
      expect(links.maxLevel).toBeGreaterThan(0);
      expect(links.entryKey).toBeGreaterThanOrEqual(0);
      expect(links.entryKey).toBeLessThan(N);
    });
  }

  it('names a node no base-level link points to, which no walk reaches', () => {
    const params: AnnParams = { ...TEST_ANN, quantization: 'f32' };
    const path = saved('orphan', params);
    expect(reachable(path, params, 0)).toBe(true);
    const before = readGraphLinks(path).orphans;
    const key = orphanFirstBaseNode(path);
    expect(reachable(path, params, key)).toBe(false);
    expect(readGraphLinks(path).orphans).toEqual([...new Set([...before, key])].sort((a, b) => a - b));
  });

  it('a file that is not a graph it knows is a GraphFormatError naming the file', () => {
    const good = readFileSync(saved('good', { ...TEST_ANN, quantization: 'f32' }));
    const vectorsEnd = 8 + N * DIM * 4;
    const cases: Record<string, Buffer> = {
      truncated: good.subarray(0, good.length - 100),
      'no head': good.subarray(0, vectorsEnd + 20),
      'bad magic': Buffer.concat([good.subarray(0, vectorsEnd), Buffer.from('USEARCH'), good.subarray(vectorsEnd + 7)]),
      // the first node's level, past the head (64 bytes) and the header (40)
      'bad level': Buffer.concat([
        good.subarray(0, vectorsEnd + 104),
        Buffer.from([0xff, 0xff]), // −1
        good.subarray(vectorsEnd + 106),
      ]),
    };
    for (const [name, bytes] of Object.entries(cases)) {
      const path = join(tmp.dir, `bad ${name}`);
      writeFileSync(path, bytes);
      expect(() => readGraphLinks(path), name).toThrow(GraphFormatError);
      expect(() => readGraphLinks(path), name).toThrow(path);
    }
    expect(() => readGraphLinks(join(tmp.dir, 'bad bad level'))).toThrow(/node 0 has level -1, the graph's top is/);
  });
});

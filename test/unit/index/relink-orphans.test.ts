import { join } from 'node:path';
import { TEST_ANN } from '../../helpers/ann.js';
import { afterAll, describe, expect, it } from 'vitest';
import { RELINK_ROUNDS, relinkOrphans } from '../../../src/index/dense/relink-orphans.js';
import { AnnBuilder, AnnIndex, type AnnParams } from '../../../src/index/dense/ann.js';
import { readGraphLinks } from '../../../src/index/dense/graph-file.js';
import { createLogger } from '../../../src/util/log.js';
import { orphanFirstBaseNode } from '../../helpers/graph-edit.js';
import { makeTempDir } from '../../helpers/paths.js';

const DIM = 16;
const N = 400;
const PARAMS: AnnParams = { ...TEST_ANN, quantization: 'i8' };
const tmp = makeTempDir();
afterAll(() => tmp.cleanup());

const ROWS = new Float32Array(N * DIM).map((_, i) => Math.cos((Math.floor(i / DIM) + 1) * ((i % DIM) + 1)));
const row = (num: number): Float32Array => ROWS.slice(num * DIM, (num + 1) * DIM);

function lines(): { log: ReturnType<typeof createLogger>; seen: string[] } {
  const seen: string[] = [];
  return { log: createLogger('info', (l) => seen.push(l)), seen };
}

/** A saved graph with one node cut off on purpose; its path and key. */
function withOrphan(name: string): { path: string; key: number } {
  const b = new AnnBuilder(DIM, PARAMS);
  b.add(0, ROWS, 1);
  const path = join(tmp.dir, name);
  b.save(path);
  return { path, key: orphanFirstBaseNode(path) };
}

function resumed(path: string): AnnBuilder {
  const got = AnnBuilder.resume(path, DIM, PARAMS);
  if (!('builder' in got)) throw new Error(got.reason);
  return got.builder;
}

describe('relinkOrphans (real USearch graph)', () => {
  it('re-inserts a node no link reaches, so that a search finds it again', () => {
    const { path, key } = withOrphan('fix');
    const { log, seen } = lines();
    const report = relinkOrphans(resumed(path), path, row, log);
    expect(report.left).toEqual([]);
    expect(report.relinked).toBeGreaterThanOrEqual(1);
    expect(seen.join('')).toMatch(/relinking \d+ node\(s\) no link reached \(round 1\)/);
    expect(seen.at(-1)).toMatch(/all 400 nodes reachable \(\d+ relinked; checked in/);
    expect(readGraphLinks(path)).toMatchObject({ nodes: N, deleted: 0, orphans: [] });
    const index = AnnIndex.open(path, DIM, PARAMS, { mmap: true, expansionSearch: 64 });
    expect(index.size).toBe(N);
    expect(index.search(row(key), 1).nums).toEqual([key]);
  });

  it('does nothing to a graph every node of which is linked', () => {
    const { path } = withOrphan('clean');
    relinkOrphans(resumed(path), path, row, lines().log);
    const { log, seen } = lines();
    expect(relinkOrphans(resumed(path), path, row, log)).toEqual({ relinked: 0, left: [] });
    expect(seen).toEqual([expect.stringMatching(/HNSW graph: all 400 nodes reachable \(no link missing; checked in/)]);
  });

  it(`warns, naming the chunks, when ${RELINK_ROUNDS} rounds leave orphans`, () => {
    const { path, key } = withOrphan('stuck');
    // a builder whose re-insertion changes nothing: the file keeps its orphan
    const inert = { reinsert: () => undefined, save: () => undefined } as unknown as AnnBuilder;
    const { log, seen } = lines();
    const report = relinkOrphans(inert, path, row, log);
    expect(report.left).toContain(key);
    expect(report.relinked).toBe(RELINK_ROUNDS * report.left.length);
    expect(seen.at(-1)).toMatch(new RegExp(`still unreachable after ${RELINK_ROUNDS} rounds .*chunks .*${key}`));
  });
});

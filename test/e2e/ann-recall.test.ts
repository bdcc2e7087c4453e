import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultExpansionAdd, defaultExpansionSearch } from '../../src/index/dense/ann.js';
import { tinyBuildArgs } from '../helpers/encoder.js';
import { orphanFirstBaseNode } from '../helpers/graph-edit.js';
import { runBin } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir, sharedPath } from '../helpers/paths.js';

const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'idx');
afterAll(tmp.cleanup);

function build(name: string, extra: string[]): void {
  const b = runBin(BIN.build, [
    ...tinyBuildArgs(name, sharedPath('data/2wiki-200/corpus.jsonl'), indexDir),
    '--no-progress',
    ...extra,
  ]);
  expect(b.status, b.stderr).toBe(0);
}

function annRecall(name: string, extra: string[]) {
  return runBin(BIN.server, [
    'eval',
    '--corpus',
    name,
    '--index-dir',
    indexDir,
    '--queries',
    sharedPath('data/2wiki-200/queries.jsonl'),
    '--format',
    'flashrag',
    '--ann-recall',
    '--no-progress',
    ...extra,
  ]);
}

describe.skipIf(!HAS_SHARED)('eval --ann-recall (tiny-e5, real USearch graph)', () => {
  beforeAll(() => {
    // 1,585 chunks with an HNSW graph, built on one thread: a threaded USearch
    // build is not deterministic (1 build in 29 here left chunk 17 with no
    // inbound link, which build-index now relinks); one thread builds the same
    // graph every time, so this test measures one graph
    build('graph', ['--exact-below', '0', '--ann-threads', '1']);
    build('cut', ['--exact-below', '0', '--ann-threads', '1']);
    build('flat', []); // small enough to be searched exactly
    build('ivf', ['--exact-below', '0', '--ann', 'ivf', '--ivf-lists', '16']);
  });

  it('on an IVF index measures probes:rescore settings, and probing every list with every vector re-scored gives recall 1', () => {
    const json = join(tmp.dir, 'ivf-recall.json');
    const r = annRecall('ivf', ['--k', '10', '--limit', '60', '--ivf-settings', '1:20,16:1585', '--json', json]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\| probes:rescore \| recall@10 \|/);
    expect(r.stdout).toMatch(/\| 16:1585 \| 1\.0000 \|/);
    expect(r.stdout).toMatch(/--ivf-probes P --ivf-rescore R/);
    const out = JSON.parse(readFileSync(json, 'utf8')) as {
      rows: Array<{ probes: number; rescore: number; recall: number }>;
    };
    expect(out.rows.map((x) => [x.probes, x.rescore])).toEqual([
      [1, 20],
      [16, 1585],
    ]);
    // one list of sixteen and 20 candidates cannot hold every true neighbour of 60 questions
    expect(out.rows[0]!.recall).toBeLessThan(1);
    expect(out.rows[0]!.recall).toBeGreaterThan(0);
    // with no --ivf-settings: the index's own setting first, then larger ones
    const d = annRecall('ivf', ['--k', '10', '--limit', '20']);
    expect(d.status, d.stderr).toBe(0);
    // 16 lists, all probed by default: then more re-scored, each setting once
    expect(d.stdout.match(/^\| \d+:\d+ \|/gm)).toEqual(['| 16:500 |', '| 16:1000 |', '| 16:2000 |']);
    const bad = annRecall('ivf', ['--ivf-settings', '16']);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/--ivf-settings: "16" is not probes:rescore/);
  });

  it('measures the served path against exhaustive search; an exhaustive setting gives recall 1', () => {
    const json = join(tmp.dir, 'recall.json');
    // efSearch 4000 > 1,585 nodes and 100 × 10 candidates re-scored: the walk sees every node
    const r = annRecall('graph', [
      '--k',
      '10',
      '--limit',
      '60',
      '--ef-search',
      '8,4000',
      '--rescore-factor',
      '100',
      '--json',
      json,
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/dense recall@10 against exhaustive search, 60 queries, 1585 vectors/);
    expect(r.stdout).toMatch(/\| 4000 \| 1\.0000 \|/);
    expect(r.stdout).toMatch(/graph: every one of its 1585 nodes is linked to/);
    const out = JSON.parse(readFileSync(json, 'utf8')) as {
      k: number;
      rows: Array<{ efSearch: number; recall: number; p50Ms: number }>;
      unreachable: number[];
    };
    expect(out.k).toBe(10);
    expect(out.unreachable).toEqual([]);
    expect(out.rows.map((x) => x.efSearch)).toEqual([8, 4000]);
    expect(out.rows[1]!.recall).toBe(1);
    for (const row of out.rows) {
      expect(row.recall).toBeGreaterThan(0);
      expect(row.p50Ms).toBeGreaterThan(0);
    }
  });

  it('names the chunks of a graph that no link reaches (here one cut off on purpose)', () => {
    const key = orphanFirstBaseNode(join(indexDir, 'cut', 'dense.usearch'));
    const json = join(tmp.dir, 'cut.json');
    const r = annRecall('cut', ['--limit', '10', '--ef-search', '4000', '--json', json]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`graph: 1 of 1585 nodes no link points to \\(chunks ${key}\\); no efSearch`));
    expect((JSON.parse(readFileSync(json, 'utf8')) as { unreachable: number[] }).unreachable).toEqual([key]);
  });

  it('stores the size-based default M, efConstruction and efSearch when the build names none', () => {
    const manifest = JSON.parse(readFileSync(join(indexDir, 'graph', 'manifest.json'), 'utf8')) as {
      dense: { ann: { expansion_search: number; expansion_add: number; connectivity: number } };
    };
    expect(manifest.dense.ann.expansion_search).toBe(defaultExpansionSearch(1585));
    expect(manifest.dense.ann.connectivity).toBe(24);
    expect(manifest.dense.ann.expansion_search).toBe(128);
    expect(manifest.dense.ann.expansion_add).toBe(defaultExpansionAdd(1585));
    expect(manifest.dense.ann.expansion_add).toBe(128);
  });

  it('explains that an exactly searched corpus has nothing to measure', () => {
    const r = annRecall('flat', ['--limit', '5']);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/1585 chunks and is searched exactly \(no HNSW graph\)/);
  });

  it('names a bad --ef-search value', () => {
    const r = annRecall('graph', ['--ef-search', '64,abc']);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/--ef-search/);
  });
});

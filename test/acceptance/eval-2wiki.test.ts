import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir, sharedPath } from '../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

describe.skipIf(!HAS_SHARED)('eval on 2WikiMultiHopQA (FlashRAG format)', () => {
  it('reports supporting-id recall and answer recall per question type, and writes JSON', () => {
    const indexDir = join(tmp.dir, 'idx');
    const b = runBin(BIN.build, [
      '--name',
      '2wiki',
      '--input',
      sharedPath('data/2wiki-200/corpus.jsonl'),
      '--format',
      'wiki18',
      '--index-dir',
      indexDir,
      '--no-dense',
    ]);
    expect(b.status, b.stderr).toBe(0);
    const json = join(tmp.dir, 'eval.json');
    const r = runBin(BIN.server, [
      'eval',
      '--corpus',
      '2wiki',
      '--index-dir',
      indexDir,
      '--queries',
      sharedPath('data/2wiki-200/queries.jsonl'),
      '--format',
      'flashrag',
      '--json',
      json,
      '--no-progress',
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\| bm25 \| all +\| 200 /);
    expect(r.stdout).toMatch(/\| bm25 \| compositional/);
    const out = JSON.parse(readFileSync(json, 'utf8')) as {
      rows: Array<{ type: string; metrics: Record<string, number> }>;
    };
    const all = out.rows.find((x) => x.type === 'all')?.metrics ?? {};
    // the same numbers the MCP acceptance test measures through batch_search
    expect(all['R@10']).toBeCloseTo(0.7675, 4);
    expect(all['MRR@10']).toBeCloseTo(0.9503, 3);
    expect(all['answer@5']).toBeGreaterThan(0.3);
  });
});

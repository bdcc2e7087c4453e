import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TINY_MODEL } from '../helpers/encoder.js';
import { startHubServer, type HubServer } from '../helpers/hub-server.js';
import { connectStdio, runBinAsync, type ToolText } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir, sharedPath } from '../helpers/paths.js';

/**
 * Presets end to end against a local Hugging Face mirror (HF_ENDPOINT) that
 * serves ../shared/data under the real hub paths, and the tiny model under
 * the real ONNX repository name: the real download code, no network.
 */
const tmp = makeTempDir();
let hub: HubServer;
const cache = join(tmp.dir, 'hf-cache');
const indexDir = join(tmp.dir, 'indexes');

beforeAll(async () => {
  if (!HAS_SHARED) return;
  hub = await startHubServer({
    repos: [
      { repoType: 'model', repo: 'Xenova/e5-base-v2', dir: TINY_MODEL },
      {
        repoType: 'dataset',
        repo: 'yixuantt/MultiHopRAG',
        dir: sharedPath('data/multihop-rag'),
        files: { 'corpus.json': 'corpus.surrogate.json', 'MultiHopRAG.json': 'MultiHopRAG.surrogate.json' },
      },
      {
        repoType: 'dataset',
        repo: 'GraphRAG-Bench/GraphRAG-Bench',
        dir: sharedPath('data/graphrag-bench'),
        files: {
          'Datasets/Corpus/medical.json': 'medical.json',
          'Datasets/Questions/medical_questions.json': 'medical_questions.json',
        },
      },
    ],
  });
});
afterAll(async () => {
  await hub?.close();
  tmp.cleanup();
});

const env = (): NodeJS.ProcessEnv => ({ HF_ENDPOINT: hub.url, HF_HOME: join(tmp.dir, 'hf-home') });

describe.skipIf(!HAS_SHARED)('corpus presets through a local hub mirror', () => {
  it('build-index --corpus graphrag-medical downloads, chunks at 500 tokens and builds both arms', async () => {
    const r = await runBinAsync(
      BIN.build,
      ['--corpus', 'graphrag-medical', '--index-dir', indexDir, '--cache-dir', cache],
      env(),
    );
    expect(r.status, r.stderr).toBe(0);
    expect(hub.requests).toContain(
      'HEAD /datasets/GraphRAG-Bench/GraphRAG-Bench/resolve/main/Datasets/Corpus/medical.json',
    );
    expect(r.stderr).toMatch(/built graphrag-medical: 1 documents, \d+ chunks/);
    expect(r.stderr).toMatch(/embed intfloat\/e5-base-v2/);
  });

  it('retriever-mcp --corpus multihop builds the missing index on first run, then serves it with filters', async () => {
    const s = await connectStdio(['--corpus', 'multihop', '--index-dir', indexDir, '--cache-dir', cache], env());
    try {
      expect(s.stderr()).toMatch(/corpus multihop is not built yet: building it now/);
      const r = (await s.client.callTool({
        name: 'search',
        arguments: { query: 'Sam Bankman-Fried trial', top_k: 3 },
      })) as ToolText;
      expect(r.isError).toBeFalsy();
      const lc = (await s.client.callTool({ name: 'list_corpora', arguments: {} })) as ToolText;
      expect(lc.structuredContent).toMatchObject({
        corpora: [{ name: 'multihop', documents: 609, modes: ['hybrid', 'dense', 'bm25'] }],
      });
    } finally {
      await s.close();
    }
    // offline and already built: --no-build serves it
    const again = await connectStdio(
      ['--corpus', 'multihop', '--index-dir', indexDir, '--cache-dir', cache, '--no-build', '--offline'],
      env(),
    );
    await again.close();
  });

  it('eval downloads the preset questions and scores them', async () => {
    const json = join(tmp.dir, 'eval.json');
    const r = await runBinAsync(
      BIN.server,
      [
        'eval',
        '--corpus',
        'graphrag-medical',
        '--index-dir',
        indexDir,
        '--cache-dir',
        cache,
        '--mode',
        'bm25',
        '--limit',
        '200',
        '--json',
        json,
        '--no-progress',
      ],
      env(),
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\| bm25 \| all +\| 200 /);
    const out = JSON.parse((await import('node:fs')).readFileSync(json, 'utf8')) as {
      rows: Array<{ mode: string; type: string; metrics: Record<string, number> }>;
    };
    const all = out.rows.find((x) => x.type === 'all');
    expect(all?.metrics['R@10']).toBeGreaterThan(0.5);
  });
});

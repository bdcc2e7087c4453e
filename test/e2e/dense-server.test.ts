import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OnnxSession } from '../../src/encoder/onnx-session.js';
import { makeAlteredTinyModel, openTinyEncoder, TINY_MODEL, tinyBuildArgs } from '../helpers/encoder.js';
import { connectStdio, runBin, runBinAsync, type ToolText } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir } from '../helpers/paths.js';
import { writeJsonl } from '../helpers/build.js';
import { writeE5BaseStandIn } from '../helpers/slow-model.js';

const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'indexes');
afterAll(tmp.cleanup);

const PASSAGES = [
  { id: 'a', contents: '"Alpha"\nThe alpha particle is a helium nucleus.' },
  { id: 'b', contents: '"Beta"\nBeta decay emits an electron.' },
  { id: 'c', contents: '"Gamma"\nGamma rays are photons of high energy.' },
];

describe.skipIf(!HAS_SHARED)('dense and hybrid search over MCP (tiny-e5)', () => {
  beforeAll(() => {
    const input = writeJsonl(tmp.dir, 'phys.jsonl', PASSAGES);
    const r = runBin(BIN.build, tinyBuildArgs('phys', input, indexDir));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/embed tiny-e5/);
  });

  it('defaults to hybrid and reports both arms; dense scores are the true cosines', async () => {
    const s = await connectStdio(['--corpus', 'phys', '--index-dir', indexDir]);
    const enc = await openTinyEncoder();
    try {
      const h = (await s.client.callTool({
        name: 'search',
        arguments: { query: 'helium nucleus', top_k: 3 },
      })) as ToolText;
      const hs = h.structuredContent as { mode: string; results: Array<Record<string, number | string>> };
      expect(hs.mode).toBe('hybrid');
      expect(hs.results).toHaveLength(3);
      for (const r of hs.results) expect(r['dense_rank']).toBeGreaterThanOrEqual(1); // every chunk is a dense candidate

      const d = (await s.client.callTool({
        name: 'search',
        arguments: { query: 'helium nucleus', top_k: 3, mode: 'dense' },
      })) as ToolText;
      const ds = (
        d.structuredContent as {
          results: Array<{ id: string; dense_score: number; dense_rank: number; score: number }>;
        }
      ).results;
      const [q] = await enc.embedQueries(['helium nucleus']);
      const ps = await enc.embedPassages(PASSAGES.map((p) => p.contents));
      const cos = new Map(PASSAGES.map((p, i) => [p.id, ps[i]!.reduce((acc, x, j) => acc + x * q![j]!, 0)]));
      ds.forEach((r, i) => {
        expect(r.dense_rank).toBe(i + 1);
        expect(r.score).toBe(r.dense_score);
        expect(Math.abs(r.dense_score - cos.get(r.id)!)).toBeLessThan(1e-5);
      });
      expect(ds.map((r) => r.id)).toEqual([...cos.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id));

      const lc = (await s.client.callTool({ name: 'list_corpora', arguments: {} })) as ToolText;
      expect(lc.structuredContent).toMatchObject({
        corpora: [
          {
            name: 'phys',
            modes: ['hybrid', 'dense', 'bm25'],
            default_mode: 'hybrid',
            encoder: 'tiny-e5 (onnx/model.onnx)',
          },
        ],
      });
    } finally {
      await enc.close();
      await s.close();
    }
  });

  it('batch_search in dense mode finds the true neighbours of every query', async () => {
    // 120 chunks, far more than top_k + 16, so the exact arm's SIMD preselection matters; these
    // queries' true neighbours lie outside each other's first 19 under the tiny model
    const W = [
      'river',
      'castle',
      'violin',
      'glacier',
      'comet',
      'harbour',
      'orchard',
      'tram',
      'zebra',
      'quartz',
      'lantern',
      'meadow',
    ];
    const many = Array.from({ length: 120 }, (_, i) => ({
      id: `m${i}`,
      contents: `"Note ${i}"\n${Array.from({ length: 2 + ((i * 7) % 40) }, (_, j) => W[(i * 5 + j * j) % 12]).join(' ')}.`,
    }));
    const input = writeJsonl(tmp.dir, 'many.jsonl', many);
    const b = runBin(BIN.build, tinyBuildArgs('many', input, indexDir));
    expect(b.status, b.stderr).toBe(0);
    const s = await connectStdio(['--corpus', 'many', '--index-dir', indexDir, '--mode', 'dense']);
    const enc = await openTinyEncoder();
    try {
      const queries = [
        'river castle',
        'violin glacier comet harbour orchard tram zebra quartz lantern meadow river castle violin glacier',
        'quartz lantern meadow meadow meadow meadow',
        'what is the capital of france and who wrote the novel about the whale',
      ];
      const batch = (await s.client.callTool({ name: 'batch_search', arguments: { queries, top_k: 3 } })) as ToolText;
      const lists = (batch.structuredContent as { results: Array<Array<{ id: string }>> }).results;
      expect(lists).toHaveLength(queries.length);
      // brute force, one query at a time, outside the server
      const ps = await enc.embedPassages(many.map((p) => p.contents));
      for (const [i, query] of queries.entries()) {
        const [q] = await enc.embedQueries([query]);
        const want = ps
          .map((p, j) => ({ id: many[j]!.id, s: p.reduce((acc, x, d) => acc + x * q![d]!, 0) }))
          .sort((x, y) => y.s - x.s)
          .slice(0, 3)
          .map((h) => h.id);
        expect(lists[i]!.map((h) => h.id)).toEqual(want);
      }
    } finally {
      await enc.close();
      await s.close();
    }
  });

  it('refuses to serve with a different encoder than the index was built with', () => {
    const altered = makeAlteredTinyModel(join(tmp.dir, 'altered-model'));
    const r = runBin(BIN.server, ['--corpus', 'phys', '--index-dir', indexDir, '--model-path', altered]);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(
      /index phys was built with tiny-e5 \(onnx\/model.onnx\) \(dim 32\) but the server loaded .* model file sha256 .*rebuild it with `retriever-mcp build/,
    );
  });

  it('names the fix when the encoder cannot run on CUDA', async () => {
    let cuda = true;
    try {
      await (await OnnxSession.create(join(TINY_MODEL, 'onnx/model.onnx'), { device: 'cuda', threads: 1 })).close();
    } catch {
      cuda = false;
    }
    const r = runBin(BIN.server, ['--corpus', 'phys', '--index-dir', indexDir, '--device', 'cuda']);
    if (cuda) return; // a GPU machine: covered by test/gpu
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /CUDA provider .*ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node.*--device cpu/,
    );
    // one line naming the fix, not ONNX Runtime's own red log lines
    expect(r.stderr).not.toMatch(/Failed to load library|\[E:onnxruntime/);
  });
});

describe.skipIf(!HAS_SHARED)('model download through HF_ENDPOINT, end to end', () => {
  it('build-index fetches intfloat/e5-base-v2 as its ONNX conversion into --cache-dir, and the server loads it from the cache', async () => {
    const { startHubServer } = await import('../helpers/hub-server.js');
    // a model of e5-base-v2's shape stands in for the real weights under the real repository name
    const standIn = writeE5BaseStandIn(join(tmp.dir, 'e5-base-stand-in'));
    const hub = await startHubServer({ repos: [{ repoType: 'model', repo: 'Xenova/e5-base-v2', dir: standIn }] });
    const cache = join(tmp.dir, 'hf-cache');
    try {
      const input = writeJsonl(tmp.dir, 'hub.jsonl', PASSAGES);
      const r = await runBinAsync(
        BIN.build,
        ['--name', 'hub', '--input', input, '--format', 'wiki18', '--index-dir', indexDir, '--cache-dir', cache],
        { HF_ENDPOINT: hub.url },
      );
      expect(r.status, r.stderr).toBe(0);
      expect(hub.requests.some((q) => q.startsWith('GET /cdn/'))).toBe(true);
    } finally {
      await hub.close();
    }
    // the hub is gone: the server must find the model in the cache
    const s = await connectStdio(['--corpus', 'hub', '--index-dir', indexDir, '--cache-dir', cache, '--offline']);
    try {
      const d = (await s.client.callTool({
        name: 'search',
        arguments: { query: 'beta decay', mode: 'dense', top_k: 1 },
      })) as ToolText;
      expect(d.isError).toBeFalsy();
      expect(s.stderr()).toMatch(/encoder intfloat\/e5-base-v2 \(onnx\/model.onnx\) from Xenova\/e5-base-v2@main/);
    } finally {
      await s.close();
    }
  });

  it('a model whose files contradict its name is refused before its ONNX file is downloaded (issue 48, item 4)', async () => {
    const { startHubServer } = await import('../helpers/hub-server.js');
    // the 32-dimensional tiny e5 served as e5-base-v2: before, accepted, and hybrid fell below BM25 alone
    const hub = await startHubServer({ repos: [{ repoType: 'model', repo: 'Xenova/e5-base-v2', dir: TINY_MODEL }] });
    const cache = join(tmp.dir, 'hf-cache-wrong');
    try {
      const input = writeJsonl(tmp.dir, 'wrong.jsonl', PASSAGES);
      const r = await runBinAsync(
        BIN.build,
        ['--name', 'wrong', '--input', input, '--format', 'wiki18', '--index-dir', indexDir, '--cache-dir', cache],
        { HF_ENDPOINT: hub.url },
      );
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(
        /config\.json does not describe intfloat\/e5-base-v2: hidden size 32 where e5-base-v2 has 768, layers 2 where e5-base-v2 has 12\. .*delete the cached copy/,
      );
      expect(hub.requests.filter((q) => q.includes('model.onnx'))).toEqual([]);
      expect(existsSync(join(indexDir, 'wrong'))).toBe(false);
    } finally {
      await hub.close();
    }
  });

  it('a model of no known family is served with its dimension and pooling stated at start', async () => {
    const input = writeJsonl(tmp.dir, 'unknown.jsonl', PASSAGES);
    const r = runBin(BIN.build, [
      '--name',
      'unknown',
      '--input',
      input,
      '--format',
      'wiki18',
      '--index-dir',
      indexDir,
      '--model-path',
      TINY_MODEL,
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /encoder tiny-e5 .*\(dim 32, mean pooling; not a model this server knows: its own files set both\b/,
    );
  });
});

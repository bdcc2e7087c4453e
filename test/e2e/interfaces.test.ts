import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bm25BuildArgs, writeJsonl } from '../helpers/build.js';
import { tinyBuildArgs } from '../helpers/encoder.js';
import { postJson, startHttpServer, type RunningServer } from '../helpers/http-server.js';
import { connectStdio, runBin, runBinAsync, textOf, type ToolText } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir } from '../helpers/paths.js';

// Interfaces that forgive and explain (issue 42): each case sends what a user or an LLM sent and checks
// what they now get.
const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'indexes');
let server: RunningServer;

beforeAll(async () => {
  if (!HAS_SHARED) return;
  const input = writeJsonl(
    tmp.dir,
    'c.jsonl',
    Array.from({ length: 40 }, (_, i) => ({
      id: String(i),
      contents: `"Topic ${i}"\nkings and rivers, paragraph ${i}`,
    })),
  );
  expect(runBin(BIN.build, tinyBuildArgs('c', input, indexDir)).status).toBe(0);
  expect(runBin(BIN.build, bm25BuildArgs('plain', input, indexDir)).status).toBe(0);
  server = await startHttpServer(['--corpus', 'c', '--index-dir', indexDir, '--auth-token', 'sekret']);
}, 120_000);
afterAll(async () => {
  await server?.stop();
  tmp.cleanup();
});

const auth = { authorization: 'Bearer sekret' };
const message = (r: { json: unknown }) => (r.json as { error: { message: string } }).error.message;

describe.skipIf(!HAS_SHARED)('REST: misspelled fields are named, numeric strings taken', () => {
  it.each([
    ['/retrieve', { queries: ['kings'], top_k: 5 }, /unknown field "top_k" in \/retrieve: did you mean "topk"\?/],
    [
      '/retrieve',
      { queries: ['kings'], return_score: true },
      /unknown field "return_score" in \/retrieve: did you mean "return_scores"\?/,
    ],
    ['/search', { query: 'kings', topk: 5 }, /unknown field "topk" in \/search: did you mean "top_n"\?/],
    ['/batch_search', { query: ['kings'], return_scores: true }, /did you mean "return_score"\?/],
    [
      '/retrieve',
      { queries: ['kings'], colour: 1 },
      /unknown field "colour" in \/retrieve \(\/retrieve takes queries, query, query_vectors, topk/,
    ],
  ])('%s %j: 400 naming the field and the nearest valid one', async (route, body, re) => {
    const r = await postJson(`${server.url}${route}`, body, auth);
    expect(r.status).toBe(400);
    expect(message(r)).toMatch(re);
  });

  it('takes "5" and "true" as an LLM writes them, and says what the scores are', async () => {
    const r = await postJson(
      `${server.url}/retrieve`,
      { queries: ['kings rivers'], topk: '5', return_scores: 'true' },
      auth,
    );
    expect(r.status, r.text).toBe(200);
    const body = r.json as unknown as { result: Array<Array<{ score: number }>>; score_kind: string };
    expect(body.result[0]).toHaveLength(5);
    expect(body.score_kind).toBe('rrf');
    expect(r.headers.get('x-score-kind')).toBe('rrf');
    const bm25 = await postJson(
      `${server.url}/search`,
      { query: 'kings', top_n: 2, mode: 'bm25', return_score: true },
      auth,
    );
    expect(bm25.headers.get('x-score-kind')).toBe('bm25');
  });

  it('/ready answers a probe without the token: its status, nothing more', async () => {
    const probe = await fetch(`${server.url}/ready`);
    expect(probe.status).toBe(200);
    expect(await probe.json()).toEqual({ status: 'ready' });
    const full = await fetch(`${server.url}/ready`, { headers: auth });
    expect(((await full.json()) as { corpora: string[] }).corpora).toEqual(['c']);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
  });
});

describe.skipIf(!HAS_SHARED)('MCP tools: the same rule', () => {
  it('names an unknown argument, takes top_k "5", names the encoder in the mode description, and gives the version', async () => {
    const s = await connectStdio(['--corpus', 'c', '--index-dir', indexDir]);
    try {
      const k = (await s.client.callTool({ name: 'search', arguments: { query: 'kings', k: 10 } })) as ToolText;
      expect(k.isError).toBe(true);
      expect(textOf(k)).toMatch(/unknown argument "k" in search: did you mean "top_k"\?/);
      const five = (await s.client.callTool({ name: 'search', arguments: { query: 'kings', top_k: '5' } })) as ToolText;
      expect(five.isError, textOf(five)).toBeFalsy();
      expect((five.structuredContent as { results: unknown[] }).results).toHaveLength(5);
      const around = (await s.client.callTool({ name: 'fetch', arguments: { id: '3', around: '1' } })) as ToolText;
      expect((around.structuredContent as { chunks: unknown[] }).chunks.length).toBeGreaterThan(0);
      const { tools } = await s.client.listTools();
      const mode = (
        tools.find((t) => t.name === 'search')?.inputSchema.properties as Record<string, { description: string }>
      )['mode'];
      expect(mode?.description).toMatch(/dense = embeddings of tiny-e5 only/);
      const list = (await s.client.callTool({ name: 'list_corpora', arguments: {} })) as ToolText;
      expect((list.structuredContent as { version: string }).version).toMatch(/^\d+\.\d+\.\d+/);
      expect(s.client.getServerVersion()?.version).toBe((list.structuredContent as { version: string }).version);
    } finally {
      await s.close();
    }
  });
});

describe('the command line', () => {
  it('--version on both commands', () => {
    for (const [bin, args] of [
      [BIN.server, ['--version']],
      [BIN.server, ['build', '--version']],
      [BIN.build, ['--version']],
    ] as const) {
      const r = runBin(bin, [...args]);
      expect(r.status).toBe(0);
      expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    }
  });

  it('--transport sse says where SSE is served', () => {
    const r = runBin(BIN.server, ['--corpus', 'c', '--transport', 'sse']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/served by --transport http, at GET \/sse and POST \/messages/);
  });

  it.skipIf(!HAS_SHARED)(
    'a --model-path for an index without a dense arm: an error when missing, a warning otherwise',
    async () => {
      const missing = await runBinAsync(BIN.server, [
        '--corpus',
        'plain',
        '--index-dir',
        indexDir,
        '--model-path',
        '/no/such/model',
      ]);
      expect(missing.status).toBe(2);
      expect(missing.stderr).toMatch(/--model-path \/no\/such\/model does not exist/);
      const s = await connectStdio(['--corpus', 'plain', '--index-dir', indexDir, '--model-path', tmp.dir]);
      await s.close();
      expect(s.stderr()).toMatch(/--model-path is not used: no served index has a dense arm/);
    },
  );

  it('a flag that only HTTP reads, over stdio: one grammatical warning', async () => {
    const s = await connectStdio(['--corpus', 'plain', '--index-dir', indexDir, '--port', '9999']);
    await s.close();
    expect(s.stderr()).toMatch(/--port applies only to --transport http; serving over stdio, it is ignored/);
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttp2026, runBin, textOf } from '../helpers/mcp.js';
import { TINY_MODEL } from '../helpers/encoder.js';
import { postJson, startHttpServer, type RunningServer } from '../helpers/http-server.js';
import { BIN, HAS_SHARED, makeTempDir, sharedPath } from '../helpers/paths.js';

// Issue 56, item 6: search by a vector computed elsewhere, over REST and MCP, on a corpus served
// without its encoder's weights (--no-encoder), its dense index an IVF of 1-bit codes.
const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'indexes');
let srv: RunningServer;
let rows: Float32Array[];
let ids: string[];
const DIM = 32; // the tiny e5's

beforeAll(async () => {
  if (!HAS_SHARED) return;
  const input = sharedPath('data/2wiki-200/corpus.jsonl');
  const r = runBin(BIN.build, [
    ...['--name', 'v', '--input', input, '--format', 'wiki18', '--index-dir', indexDir],
    ...['--model-path', TINY_MODEL, '--ann', 'ivf', '--exact-below', '0', '--ivf-lists', '16', '--quiet'],
  ]);
  expect(r.status, r.stderr).toBe(0);
  const bin = readFileSync(join(indexDir, 'v', 'vectors.bin'));
  const all = new Float32Array(bin.buffer, bin.byteOffset, bin.length / 4);
  rows = Array.from({ length: all.length / DIM }, (_, i) => all.slice(i * DIM, (i + 1) * DIM));
  ids = readFileSync(input, 'utf8')
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { id: string }).id);
  // no --model-path: the encoder's weights are not needed, and not loaded
  srv = await startHttpServer(['--corpus', 'v', '--index-dir', indexDir, '--no-encoder']);
}, 180_000);
afterAll(async () => {
  await srv?.stop();
  tmp.cleanup();
});

const vec = (i: number): number[] => Array.from(rows[i] as Float32Array);

describe.skipIf(!HAS_SHARED)('query vectors, without the encoder (issue 56, item 6)', () => {
  it('POST /retrieve with query_vectors: a passage’s own vector finds it first, dense', async () => {
    const r = await postJson(`${srv.url}/retrieve`, {
      query_vectors: [vec(7), vec(900)],
      topk: 3,
      return_scores: true,
    });
    expect(r.status, r.text).toBe(200);
    const body = r.json as unknown as {
      result: Array<Array<{ document: { id: string }; score: number }>>;
      score_kind: string;
    };
    expect(body.score_kind).toBe('cosine');
    expect(body.result[0]?.[0]?.document.id).toBe(ids[7]);
    expect(body.result[1]?.[0]?.document.id).toBe(ids[900]);
    expect(body.result[0]?.[0]?.score).toBeCloseTo(1, 4);
    expect(srv.stderr()).toMatch(/dense index: IVF of 1-bit codes, 16 lists/);
  });

  it('with the queries’ text, hybrid runs without the encoder; text alone is BM25; each refusal names the fix', async () => {
    const hybrid = await postJson(`${srv.url}/retrieve`, {
      queries: ['Antiochus'],
      query_vectors: [vec(90)],
      topk: 3,
      mode: 'hybrid',
      return_scores: true,
    });
    expect(hybrid.status, hybrid.text).toBe(200);
    expect((hybrid.json as unknown as { score_kind: string }).score_kind).toBe('rrf');
    const text = await postJson(`${srv.url}/retrieve`, { queries: ['Antiochus'], topk: 3, return_scores: true });
    expect((text.json as unknown as { score_kind: string }).score_kind).toBe('bm25');
    const cases: Array<[unknown, RegExp]> = [
      [{ queries: ['Antiochus'], mode: 'dense' }, /served without its query encoder .*send query vectors/],
      [{ query_vectors: [vec(1)], mode: 'hybrid' }, /needs the query text too/],
      [{ query_vectors: [[1, 2, 3]] }, /has 3 dimensions; corpus v's vectors have 32/],
      [{ query_vectors: [new Array(DIM).fill(0)] }, /all zeros/],
      [{ query_vectors: [[...vec(1).slice(1), 'x']] }, /numbers only/],
      [{ queries: ['a', 'b'], query_vectors: [vec(1)] }, /1 query vectors for 2 queries/],
      [{ query_vectors: 'nope' }, /must be a list of vectors/],
    ];
    for (const [body, msg] of cases) {
      const r = await postJson(`${srv.url}/retrieve`, body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBeGreaterThanOrEqual(400);
      expect(r.text).toMatch(msg);
    }
  });

  it('MCP search takes query_vector; list_corpora names the dense index', async () => {
    const c = await connectHttp2026(`${srv.url}/mcp`);
    try {
      const r = (await c.callTool({
        name: 'search',
        arguments: { query: 'anything', query_vector: vec(444), mode: 'dense', top_k: 2 },
      })) as { isError?: boolean; structuredContent?: { results: Array<{ id: string }> } };
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      expect(r.structuredContent?.results[0]?.id).toBe(ids[444]);
      const bad = await c.callTool({
        name: 'search',
        arguments: { query: 'x', query_vector: [0.5, 0.5], mode: 'dense' },
      });
      expect(textOf(bad)).toMatch(/has 2 dimensions; corpus v's vectors have 32/);
      const lc = await c.callTool({ name: 'list_corpora', arguments: {} });
      expect(textOf(lc)).toMatch(/dense index IVF of 1-bit codes, 16 lists, \d+ probed/);
      expect(textOf(lc)).toMatch(/default bm25/);
    } finally {
      await c.close();
    }
  });
});

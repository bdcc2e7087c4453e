import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeJsonl } from '../helpers/build.js';
import { tinyBuildArgs } from '../helpers/encoder.js';
import { postJson, startHttpServer, type RunningServer } from '../helpers/http-server.js';
import { connectHttp2026, runBin, type ToolText } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir } from '../helpers/paths.js';

const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'indexes');
const PASSAGES = Array.from({ length: 40 }, (_, i) => ({
  id: `w${i}`,
  contents: `"Topic ${i}"\nParagraph ${i} is about ${['rivers', 'kings', 'films', 'music'][i % 4]} and number ${i * 7}.`,
}));
let srv: RunningServer;

beforeAll(async () => {
  if (!HAS_SHARED) return;
  const input = writeJsonl(tmp.dir, 'w.jsonl', PASSAGES);
  const r = runBin(BIN.build, tinyBuildArgs('w', input, indexDir));
  expect(r.status, r.stderr).toBe(0);
  srv = await startHttpServer(['--corpus', 'w', '--index-dir', indexDir]);
});
afterAll(async () => {
  await srv?.stop();
  tmp.cleanup();
});

async function mcpClient(transport: StreamableHTTPClientTransport | SSEClientTransport): Promise<Client> {
  const c = new Client({ name: 'http-test', version: '0' });
  await c.connect(transport);
  return c;
}

describe.skipIf(!HAS_SHARED)('HTTP transport (real server process)', () => {
  it('answers /health and /ready, and exposes Prometheus metrics', async () => {
    expect(await (await fetch(`${srv.url}/health`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${srv.url}/ready`)).json()).toEqual({ status: 'ready', corpora: ['w'] });
    await postJson(`${srv.url}/retrieve`, { queries: ['rivers'] });
    const m = await (await fetch(`${srv.url}/metrics`)).text();
    expect(m).toMatch(/# TYPE retriever_request_duration_seconds histogram/);
    expect(m).toMatch(/retriever_requests_total\{route="\/retrieve",status="ok"\} \d+/);
    expect(m).toMatch(/retriever_encoder_batch_size_count \d+/);
    await postJson(`${srv.url}/retrieve`, { queries: ['rivers'] }); // the same query again: a cache hit
    const m2 = await (await fetch(`${srv.url}/metrics`)).text();
    expect(Number(/retriever_cache_hits_total (\d+)/.exec(m2)?.[1])).toBeGreaterThanOrEqual(1);
    expect(Number(/retriever_cache_misses_total (\d+)/.exec(m2)?.[1])).toBeGreaterThanOrEqual(1);
  });

  it('serves MCP over Streamable HTTP with a session', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`));
    const c = await mcpClient(transport);
    try {
      expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      const { tools } = await c.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['batch_search', 'fetch', 'list_corpora', 'search']);
      const r = (await c.callTool({ name: 'search', arguments: { query: 'kings number 7', top_k: 2 } })) as ToolText;
      expect((r.structuredContent as { mode: string; results: unknown[] }).results).toHaveLength(2);
    } finally {
      await transport.terminateSession();
      await c.close();
    }
  });

  it('serves a v2 client in 2026-07-28 mode on the same endpoint: no initialize, no session', async () => {
    const c = await connectHttp2026(`${srv.url}/mcp`);
    try {
      expect(c.getServerVersion()?.name).toBe('retriever-mcp');
      const { tools } = await c.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['batch_search', 'fetch', 'list_corpora', 'search']);
      const r = (await c.callTool({ name: 'search', arguments: { query: 'kings number 7', top_k: 2 } })) as ToolText;
      expect((r.structuredContent as { results: unknown[] }).results).toHaveLength(2);
      const bad = (await c.callTool({ name: 'search', arguments: { query: 'kings', k: 3 } })) as ToolText;
      expect(bad.isError).toBe(true);
      expect(JSON.stringify(bad.content)).toMatch(/top_k/);
    } finally {
      await c.close();
    }
    // nothing was kept for it
    const m = await (await fetch(`${srv.url}/metrics`)).text();
    expect(/retriever_mcp_sessions (\d+)/.exec(m)?.[1]).toBe('0');
  });

  it("answers 2026-07-28 requests in that revision's shape, and names the versions it serves", async () => {
    const envelope = (v: string) => ({
      'io.modelcontextprotocol/protocolVersion': v,
      'io.modelcontextprotocol/clientCapabilities': {},
    });
    const post = (method: string, params: Record<string, unknown>, v = '2026-07-28', name?: string) =>
      postJson(
        `${srv.url}/mcp`,
        { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope(v) } },
        {
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': v,
          'mcp-method': method,
          ...(name ? { 'mcp-name': name } : {}),
        },
      );
    const d = await post('server/discover', {});
    expect(d.status).toBe(200);
    expect(d.headers.get('mcp-session-id')).toBeNull();
    const discover = (d.json as unknown as { result: Record<string, unknown> }).result;
    expect(discover['supportedVersions']).toContain('2026-07-28');
    expect(discover['resultType']).toBe('complete');
    expect(discover['_meta']).toMatchObject({ 'io.modelcontextprotocol/serverInfo': { name: 'retriever-mcp' } });
    const list = (await post('tools/list', {})).json as unknown as { result: Record<string, unknown> };
    expect(list.result).toMatchObject({ resultType: 'complete' });
    expect(typeof list.result['ttlMs']).toBe('number');
    expect(typeof list.result['cacheScope']).toBe('string');
    const call = await post(
      'tools/call',
      { name: 'search', arguments: { query: 'films', top_k: 1 } },
      undefined,
      'search',
    );
    expect((call.json as unknown as { result: Record<string, unknown> }).result).toMatchObject({
      resultType: 'complete',
      structuredContent: { corpus: 'w' },
    });
    // a revision the server does not serve: an error naming the ones it does
    const future = await post('tools/list', {}, '2099-01-01');
    expect(JSON.stringify(future.json)).toMatch(/2026-07-28/);
    expect((future.json as unknown as { error: { code: number } }).error.code).toBeLessThan(0);
  });

  it('serves stateless MCP requests (no initialize, no session id)', async () => {
    const r = await postJson(
      `${srv.url}/mcp`,
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'search', arguments: { query: 'films', top_k: 1, mode: 'bm25' } },
      },
      { accept: 'application/json, text/event-stream' },
    );
    expect(r.status).toBe(200);
    expect(r.headers.get('mcp-session-id')).toBeNull();
    expect(
      (r.json as unknown as { result: { structuredContent: { results: unknown[] } } }).result.structuredContent.results,
    ).toHaveLength(1);
  });

  it('keeps concurrent stateless calls apart when clients reuse the same JSON-RPC id', async () => {
    // dense and hybrid calls wait on the encoder thread, so these overlap inside the server
    const asks = Array.from({ length: 24 }, (_, i) => ({
      query: `paragraph ${i} number ${i * 7}`,
      top_k: 1 + (i % 8),
      mode: i % 2 === 0 ? 'hybrid' : 'dense',
    }));
    const got = await Promise.all(
      asks.map((args) =>
        postJson(
          `${srv.url}/mcp`,
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search', arguments: args } },
          { accept: 'application/json, text/event-stream' },
        ),
      ),
    );
    got.forEach((r, i) => {
      expect(r.status).toBe(200);
      const msg = r.json as unknown as {
        id: number;
        result: { structuredContent: { mode: string; results: unknown[] } };
      };
      expect(msg.id).toBe(1);
      // each answer is the one for this call's own arguments
      expect(msg.result.structuredContent.mode).toBe(asks[i]?.mode);
      expect(msg.result.structuredContent.results).toHaveLength(asks[i]?.top_k ?? -1);
    });
  });

  it('answers a stateless batch in order with the ids the client sent, and notifications with 202', async () => {
    const accept = { accept: 'application/json, text/event-stream' };
    const r = await postJson(
      `${srv.url}/mcp`,
      [
        { jsonrpc: '2.0', id: 'a', method: 'tools/list' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 9, method: 'no/such/method' },
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_corpora', arguments: {} } },
      ],
      accept,
    );
    expect(r.status).toBe(200);
    const answers = r.json as unknown as Array<{
      id: unknown;
      result?: { tools?: unknown[] };
      error?: { code: number };
    }>;
    expect(answers.map((a) => a.id)).toEqual(['a', 9, 3]);
    expect(answers[0]?.result?.tools?.length).toBeGreaterThanOrEqual(4);
    expect(answers[1]?.error?.code).toBe(-32601);
    expect(answers[2]?.result).toBeDefined();
    const note = await postJson(`${srv.url}/mcp`, { jsonrpc: '2.0', method: 'notifications/initialized' }, accept);
    expect(note.status).toBe(202);
  });

  it('refuses malformed stateless MCP requests with JSON-RPC errors', async () => {
    const accept = { accept: 'application/json, text/event-stream' };
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const init = {
      jsonrpc: '2.0',
      id: 2,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    };
    const cases: Array<[unknown, Record<string, string>, number, number, RegExp]> = [
      [list, { accept: 'application/json' }, 406, -32000, /Accept/],
      // valid JSON that is not a JSON-RPC message: Invalid Request (JSON-RPC 2.0, section 5)
      [{ hello: 'world' }, accept, 400, -32600, /JSON-RPC/],
      [[], accept, 400, -32600, /batch/],
      [Array.from({ length: 101 }, () => list), accept, 400, -32600, /batch/i],
      [[init, list], accept, 400, -32600, /initiali[sz]/],
      [list, { ...accept, 'mcp-protocol-version': '1999-01-01' }, 400, -32000, /protocol version/],
    ];
    for (const [body, headers, status, code, message] of cases) {
      const r = await postJson(`${srv.url}/mcp`, body, headers);
      expect(r.status, `${JSON.stringify(body).slice(0, 80)}: ${r.text}`).toBe(status);
      const err = (r.json as unknown as { error: { code: number; message: string } }).error;
      expect(err.code).toBe(code);
      expect(err.message).toMatch(message);
    }
    // and the server still answers
    const ok = await postJson(`${srv.url}/mcp`, list, accept);
    expect(ok.status).toBe(200);
  });

  it('serves a real MCP client against a --stateless server (initialize answered, no session id)', async () => {
    const s = await startHttpServer(['--corpus', 'w', '--index-dir', indexDir, '--stateless']);
    try {
      const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`));
      const c = await mcpClient(transport);
      try {
        expect(transport.sessionId).toBeUndefined();
        expect(c.getServerVersion()?.name).toBe('retriever-mcp');
        const r = (await c.callTool({ name: 'search', arguments: { query: 'music', top_k: 2 } })) as ToolText;
        expect((r.structuredContent as { results: unknown[] }).results).toHaveLength(2);
      } finally {
        await c.close();
      }
    } finally {
      await s.stop();
    }
  });

  it('serves MCP over legacy SSE', async () => {
    const c = await mcpClient(new SSEClientTransport(new URL(`${srv.url}/sse`)));
    try {
      const r = (await c.callTool({
        name: 'search',
        arguments: { query: 'music', top_k: 1, mode: 'bm25' },
      })) as ToolText;
      expect(r.isError).toBeFalsy();
    } finally {
      await c.close();
    }
  });

  it('answers the Search-R1 /retrieve contract, with and without scores', async () => {
    const withScores = await postJson(`${srv.url}/retrieve`, {
      queries: ['rivers', 'films'],
      topk: 3,
      return_scores: true,
    });
    expect(withScores.status).toBe(200);
    const result = (
      withScores.json as unknown as {
        result: Array<Array<{ document: { id: string; contents: string }; score: number }>>;
      }
    ).result;
    expect(result).toHaveLength(2);
    expect(result[0]).toHaveLength(3);
    expect(result[0]![0]!.document.contents).toMatch(/^"Topic \d+"\n/);
    expect(typeof result[0]![0]!.score).toBe('number');
    const bare = await postJson(`${srv.url}/retrieve`, { queries: ['rivers'], topk: 2 });
    expect((bare.json as unknown as { result: Array<Array<{ id: string; contents: string }>> }).result[0]![0]).toEqual({
      id: result[0]![0]!.document.id,
      contents: result[0]![0]!.document.contents,
    });
  });

  it("answers SkyRL's one-query /retrieve form, and refuses an ambiguous one", async () => {
    // skyrl-gym's search tool: {"query": str, "topk": int, "return_scores": bool}, reads result[0]
    const skyrl = await postJson(`${srv.url}/retrieve`, { query: 'paragraph 5 kings', topk: 3, return_scores: true });
    expect(skyrl.status).toBe(200);
    const [hits] = (skyrl.json as unknown as { result: Array<Array<{ document: { id: string }; score: number }>> })
      .result;
    expect(hits).toHaveLength(3);
    expect(hits!.map((h) => h.document.id)).toContain('w5');
    const both = await postJson(`${srv.url}/retrieve`, { query: 'kings', queries: ['kings'] });
    expect(both.status).toBe(400);
    const message = (r: { json: unknown }) => (r.json as { error: { message: string } }).error.message;
    expect(message(both)).toMatch(/either "queries" \(a list\) or "query"/);
    const wrong = await postJson(`${srv.url}/retrieve`, { query: ['kings'] });
    expect(wrong.status).toBe(400);
    expect(message(wrong)).toMatch(/"query" must be a string/);
  });

  it("answers the FlashRAG /search and /batch_search forms, and ReCall's /search client", async () => {
    const one = await postJson(`${srv.url}/search`, { query: 'kings', top_n: 2, return_score: true });
    const [docs, scores] = one.json as unknown as [Array<{ id: string }>, number[]];
    expect(docs).toHaveLength(2);
    expect(scores).toHaveLength(2);
    // ReCall's wikipedia_search tool (FlashRAG serving's client): {query, top_n}, then
    // line['contents'] of each element of the list it gets back
    const recall = await postJson(`${srv.url}/search`, { query: 'kings', top_n: 3 });
    expect(recall.status).toBe(200);
    const lines = recall.json as unknown as Array<{ contents: string }>;
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line.contents).toMatch(/\S/);
    const many = await postJson(`${srv.url}/batch_search`, { query: ['kings', 'music'], top_n: 1 });
    expect((many.json as unknown as unknown[][]).map((d) => d.length)).toEqual([1, 1]);
  });

  it('returns the same fused list for the same query every time', async () => {
    const runs = await Promise.all(
      [1, 2, 3].map(() =>
        postJson(`${srv.url}/retrieve`, {
          queries: ['number 14 kings'],
          topk: 10,
          return_scores: true,
          mode: 'hybrid',
        }),
      ),
    );
    expect(runs[1]!.text).toBe(runs[0]!.text);
    expect(runs[2]!.text).toBe(runs[0]!.text);
  });

  it('rejects bad requests with a JSON error and the right status', async () => {
    const cases: Array<[unknown, string | undefined, number, RegExp]> = [
      ['{oops', 'application/json', 400, /malformed JSON/],
      [{ queries: [] }, 'application/json', 400, /empty/],
      [{ queries: Array.from({ length: 10_000 }, () => 'q') }, 'application/json', 400, /limit is 256/],
      [{ queries: ['x'], topk: 0 }, 'application/json', 400, /^topk must be an integer from 1 to 100/],
      [{ queries: ['x'], topk: 2.5 }, 'application/json', 400, /integer/],
      [{ queries: ['x'], mode: 'magic' }, 'application/json', 400, /mode/],
      [{ queries: ['x'], corpus: 'nope' }, 'application/json', 400, /unknown corpus/],
      [{ queries: ['   '] }, 'application/json', 400, /empty/],
      [{ queries: ['x'] }, 'text/plain', 415, /content-type/],
    ];
    for (const [body, type, status, msg] of cases) {
      const r = await fetch(`${srv.url}/retrieve`, {
        method: 'POST',
        headers: type ? { 'content-type': type } : {},
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      expect(r.status, JSON.stringify(body).slice(0, 50)).toBe(status);
      const j = (await r.json()) as { error: { code: string; message: string } };
      expect(j.error.message).toMatch(msg);
      expect(JSON.stringify(j)).not.toMatch(/at .*\.js:\d+/); // no stack traces
    }
    const bad = await fetch(`${srv.url}/retrieve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat([Buffer.from('{"queries": ["'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"]}')]),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/not valid UTF-8/);
    const big = await postJson(`${srv.url}/retrieve`, { queries: ['x'.repeat(2 << 20)] });
    expect(big.status).toBe(413);
    expect((await fetch(`${srv.url}/nope`)).status).toBe(404);
    expect((await fetch(`${srv.url}/retrieve`)).status).toBe(405);
    // and the server is still fine
    expect((await postJson(`${srv.url}/retrieve`, { queries: ['rivers'] })).status).toBe(200);
  });

  it('keeps serving while slow clients dribble requests', async () => {
    const { connect } = await import('node:net');
    const u = new URL(srv.url);
    const slow = Array.from({ length: 20 }, () => {
      const sock = connect(Number(u.port), u.hostname);
      sock.write(
        'POST /retrieve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"queries": [',
      );
      return sock;
    });
    try {
      const t0 = performance.now();
      const r = await postJson(`${srv.url}/retrieve`, { queries: ['rivers'], topk: 1 });
      expect(r.status).toBe(200);
      expect(performance.now() - t0).toBeLessThan(2000);
    } finally {
      for (const sock of slow) sock.destroy();
    }
  });

  it('refuses browser origins other than localhost on MCP endpoints (DNS rebinding)', async () => {
    const evil = await postJson(
      `${srv.url}/mcp`,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { origin: 'http://evil.example', accept: 'application/json, text/event-stream' },
    );
    expect(evil.status).toBe(403);
    const local = await postJson(
      `${srv.url}/mcp`,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { origin: 'http://localhost:3000', accept: 'application/json, text/event-stream' },
    );
    expect(local.status).toBe(200);
  });
});

describe.skipIf(!HAS_SHARED)('HTTP access control and shutdown', () => {
  it('answers CORS preflights only for allow-listed origins', async () => {
    const s = await startHttpServer([
      '--corpus',
      'w',
      '--index-dir',
      indexDir,
      '--cors-origins',
      'https://app.example',
    ]);
    try {
      const pre = await fetch(`${s.url}/retrieve`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
      });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example');
      const other = await fetch(`${s.url}/retrieve`, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example' },
      });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      // allowed for CORS is not the same as allowed to reach MCP: --allowed-origins governs that
      const mcp = await postJson(
        `${s.url}/mcp`,
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { origin: 'https://app.example', accept: 'application/json, text/event-stream' },
      );
      expect(mcp.status).toBe(403);
    } finally {
      await s.stop();
    }
  });

  it('requires the bearer token everywhere but /health, and drains on SIGTERM with exit 0', async () => {
    const s = await startHttpServer(['--corpus', 'w', '--index-dir', indexDir], { RETRIEVER_MCP_TOKEN: 's3cret' });
    try {
      expect((await fetch(`${s.url}/health`)).status).toBe(200);
      expect((await postJson(`${s.url}/retrieve`, { queries: ['x'] })).status).toBe(401);
      expect((await postJson(`${s.url}/retrieve`, { queries: ['x'] }, { authorization: 'Bearer wrong' })).status).toBe(
        401,
      );
      expect((await fetch(`${s.url}/metrics`)).status).toBe(401);
      expect((await postJson(`${s.url}/retrieve`, { queries: ['x'] }, { authorization: 'Bearer s3cret' })).status).toBe(
        200,
      );
      const inflight = Array.from({ length: 20 }, (_, i) =>
        postJson(`${s.url}/retrieve`, { queries: [`drain ${i}`] }, { authorization: 'Bearer s3cret' }),
      );
      const code = s.stop();
      // each request is served, refused at the socket, or (arriving as the drain starts) told to retry
      const statuses = (await Promise.allSettled(inflight)).map((r) =>
        r.status !== 'fulfilled'
          ? 'refused'
          : r.value.status === 503 && /shutting down/.test(r.value.text) && r.value.headers.get('retry-after')
            ? 'retry'
            : r.value.status,
      );
      expect(
        statuses.every((x) => x === 200 || x === 'refused' || x === 'retry'),
        JSON.stringify(statuses),
      ).toBe(true);
      expect(await code).toBe(0);
      expect(s.stderr()).toMatch(/SIGTERM: draining/);
    } finally {
      s.child.kill('SIGKILL');
    }
  });
});

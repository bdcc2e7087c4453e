import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, writeJsonl } from '../helpers/build.js';
import { postJson, startHttpServer, type RunningServer } from '../helpers/http-server.js';
import { connectHttp2026, connectStdio, textOf } from '../helpers/mcp.js';
import { BIN, makeTempDir } from '../helpers/paths.js';

// MCP 2026-07-28 to the letter (issue 47, items 1-4): each message judged on its own, a 2026 request
// stateless whatever session header it carries, no batch holding a 2026 message, and every error a
// JSON-RPC error with an integer code, the spec's own codes, and the request's id.
const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'indexes');
let srv: RunningServer;

const PASSAGES = Array.from({ length: 20 }, (_, i) => ({
  id: `p${i}`,
  contents: `"Topic ${i}"\nParagraph ${i} is about ${['rivers', 'kings'][i % 2]} and the number ${i}.`,
}));

beforeAll(async () => {
  await build({ name: 'w', input: writeJsonl(tmp.dir, 'w.jsonl', PASSAGES), format: 'wiki18', indexDir });
  srv = await startHttpServer(['--corpus', 'w', '--index-dir', indexDir]);
});
afterAll(async () => {
  await srv?.stop();
  tmp.cleanup();
});

const envelope = (v: string) => ({
  'io.modelcontextprotocol/protocolVersion': v,
  'io.modelcontextprotocol/clientCapabilities': {},
});
const req2026 = (id: number, method: string, params: Record<string, unknown> = {}, v = '2026-07-28') => ({
  jsonrpc: '2.0',
  id,
  method,
  params: { ...params, _meta: envelope(v) },
});
const headers2026 = (method: string, extra: Record<string, string> = {}) => ({
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': method,
  ...extra,
});

interface Answer {
  id: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** A raw stdio server: lines in, parsed answers out. */
function rawStdio(): {
  child: ChildProcessWithoutNullStreams;
  send: (m: unknown) => void;
  answer: (id: unknown) => Promise<Answer>;
  answers: Answer[];
} {
  const child = spawn(process.execPath, [BIN.server, '--corpus', 'w', '--index-dir', indexDir]);
  const answers: Answer[] = [];
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    let nl: number;
    while ((nl = out.indexOf('\n')) !== -1) {
      answers.push(JSON.parse(out.slice(0, nl)) as Answer);
      out = out.slice(nl + 1);
    }
  });
  const answer = async (id: unknown): Promise<Answer> => {
    for (let i = 0; i < 3000; i++) {
      const a = answers.find((m) => m.id === id);
      if (a) return a;
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no answer with id ${String(id)}; got ${JSON.stringify(answers).slice(0, 500)}`);
  };
  return { child, send: (m) => child.stdin.write(`${JSON.stringify(m)}\n`), answer, answers };
}

describe('MCP 2026-07-28 to the letter', () => {
  it('stdio: every request is checked for its revision, not only the first (item 1)', async () => {
    const s = rawStdio();
    try {
      s.send(req2026(1, 'tools/list'));
      expect((await s.answer(1)).result?.['tools']).toBeDefined();
      for (const [id, v] of [
        [2, '1900-01-01'],
        [3, '2099-01-01'],
        [4, 'garbage'],
      ] as const) {
        s.send(req2026(id, 'tools/list', {}, v));
        const a = await s.answer(id);
        expect(a.error?.code, JSON.stringify(a)).toBe(-32022);
        expect(a.error?.data).toMatchObject({ supported: ['2026-07-28'], requested: v });
      }
      s.send(req2026(5, 'tools/call', { name: 'search', arguments: { query: 'rivers', top_k: 1 } }));
      expect((await s.answer(5)).result?.['structuredContent']).toMatchObject({ corpus: 'w' });
    } finally {
      s.child.kill();
    }
  });

  it('stdio: a batch holding a 2026 message is refused whole, as over HTTP (item 3)', async () => {
    const s = rawStdio();
    try {
      s.send(req2026(1, 'tools/list'));
      await s.answer(1);
      s.send([req2026(2, 'tools/list'), req2026(3, 'tools/list')]);
      const refusal = await s.answer(null);
      expect(refusal.error?.code).toBe(-32600);
      expect(refusal.error?.message).toMatch(/batch/);
      s.send(req2026(4, 'tools/list'));
      await s.answer(4);
      // neither request of the batch was served
      expect(s.answers.filter((a) => a.id === 2 || a.id === 3)).toEqual([]);
    } finally {
      s.child.kill();
    }
  });

  it('HTTP: a 2026 request is served statelessly whatever Mcp-Session-Id it carries (item 2)', async () => {
    const init = await postJson(
      `${srv.url}/mcp`,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
      },
      { accept: 'application/json, text/event-stream' },
    );
    const live = init.headers.get('mcp-session-id') as string;
    expect(live).toMatch(/^[0-9a-f-]{36}$/);
    for (const sid of ['stale-or-made-up', live]) {
      const r = await postJson(
        `${srv.url}/mcp`,
        req2026(2, 'tools/list'),
        headers2026('tools/list', { 'mcp-session-id': sid }),
      );
      expect(r.status, r.text).toBe(200);
      expect((r.json as unknown as Answer).result?.['tools']).toHaveLength(4);
      expect(r.headers.get('mcp-session-id')).toBeNull();
    }
    // the 2025 session still answers its own requests
    const own = await postJson(
      `${srv.url}/mcp`,
      { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} },
      { accept: 'application/json, text/event-stream', 'mcp-session-id': live, 'mcp-protocol-version': '2025-11-25' },
    );
    expect(own.status, own.text).toBe(200);
  });

  it('HTTP: 2026 calls on reused instances, 24 at once, each answered with its own id and hits', async () => {
    const rounds = 3;
    for (let round = 0; round < rounds; round++) {
      const answers = await Promise.all(
        Array.from({ length: 24 }, async (_, k) => {
          const n = k % 20;
          const id = round * 100 + k;
          const r = await postJson(
            `${srv.url}/mcp`,
            req2026(id, 'tools/call', { name: 'search', arguments: { query: `number ${n}`, top_k: 1, mode: 'bm25' } }),
            headers2026('tools/call', { 'mcp-name': 'search' }),
          );
          expect(r.status, r.text).toBe(200);
          return { id, n, answer: r.json as unknown as Answer };
        }),
      );
      for (const { id, n, answer } of answers) {
        expect(answer.id).toBe(id);
        const hits = (answer.result?.['structuredContent'] as { results: Array<{ id: string }> }).results;
        expect(hits[0]?.id).toBe(`p${n}`);
      }
    }
  });

  it('HTTP: a 2026 subscriptions/listen streams as SSE, and a dropped stream leaves calls served', async () => {
    const gone = new AbortController();
    const r = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers2026('subscriptions/listen') },
      body: JSON.stringify(req2026(9, 'subscriptions/listen', { notifications: { toolsListChanged: true } })),
      signal: gone.signal,
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    let seen = '';
    while (!seen.includes('\n\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += Buffer.from(value).toString();
    }
    expect(seen).toContain('notifications/subscriptions/acknowledged');
    gone.abort();
    const after = await postJson(`${srv.url}/mcp`, req2026(10, 'tools/list'), headers2026('tools/list'));
    expect(after.status, after.text).toBe(200);
    expect((after.json as unknown as Answer).result?.['tools']).toHaveLength(4);
  });

  it('errors are JSON-RPC, with the spec codes, the id, and no code in -32000..-32019 (item 4)', async () => {
    const mcp = `${srv.url}/mcp`;
    const malformed = await postJson(mcp, '{"jsonrpc":"2.0","id":1,', headers2026('tools/list'));
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });

    // 5,000 levels deep (written as text: JSON.stringify itself overflows the stack on it)
    const call = JSON.stringify(
      req2026(7, 'tools/call', { name: 'search', arguments: { query: 'x', filter: 'DEEP' } }),
    );
    const deepBody = call.replace('"DEEP"', `${'['.repeat(5000)}${']'.repeat(5000)}`);
    const nested = await postJson(mcp, deepBody, headers2026('tools/call', { 'mcp-name': 'search' }));
    expect(nested.status).toBe(400);
    expect(nested.json).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32600 } });

    const cursor = await postJson(mcp, req2026(8, 'tools/list', { cursor: 5 }), headers2026('tools/list'));
    expect(cursor.json).toMatchObject({ id: 8, error: { code: -32602 } });
    expect((cursor.json as unknown as Answer).error?.message).not.toMatch(/\n/);
    expect((cursor.json as unknown as Answer).error?.message).toMatch(/cursor/);

    const read = (id: number, uri: string) =>
      postJson(mcp, req2026(id, 'resources/read', { uri }), headers2026('resources/read', { 'mcp-name': uri }));
    const badEncoding = await read(9, 'retriever://w/chunks/%ZZ');
    expect(badEncoding.json).toMatchObject({ id: 9, error: { code: -32602 } });
    const missing2026 = await read(10, 'retriever://w/chunks/nope');
    expect(missing2026.json).toMatchObject({ id: 10, error: { code: -32602 } });

    // a refusal before the body is read still has JSON-RPC's shape and a code outside -32000..-32019
    const wrongType = await fetch(mcp, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    const wrongTypeBody = (await wrongType.json()) as Answer;
    expect(wrongType.status).toBe(415);
    expect(wrongTypeBody).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    for (const a of [malformed, nested, cursor, badEncoding, missing2026].map((r) => r.json as unknown as Answer)) {
      expect(Number.isInteger(a.error?.code)).toBe(true);
      expect(a.error?.code !== undefined && a.error.code >= -32019 && a.error.code <= -32000).toBe(false);
    }
  });

  it('a 2025 client reads a missing passage as -32002 (2025-11-25), over stdio and HTTP (item 4)', async () => {
    const { client, close } = await connectStdio(['--corpus', 'w', '--index-dir', indexDir]);
    try {
      await expect(client.readResource({ uri: 'retriever://w/chunks/nope' })).rejects.toMatchObject({ code: -32002 });
      // a 100 KB id is refused by length, not echoed back
      const long = `retriever://w/chunks/${'x'.repeat(100_000)}`;
      const err = (await client.readResource({ uri: long }).catch((e: unknown) => e)) as {
        code: number;
        message: string;
      };
      expect(err.code).toBe(-32602);
      expect(err.message.length).toBeLessThan(300);
    } finally {
      await close();
    }
    const stateless = await postJson(
      `${srv.url}/mcp`,
      { jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri: 'retriever://w/chunks/nope' } },
      { accept: 'application/json, text/event-stream' },
    );
    expect(stateless.json).toMatchObject({ id: 4, error: { code: -32002 } });
  });

  it('the v2 client pinned to 2026-07-28 works through all of it, over stdio and HTTP', async () => {
    const stdio = await connectStdio(['--corpus', 'w', '--index-dir', indexDir], {}, '2026');
    const http = await connectHttp2026(`${srv.url}/mcp`, { 'mcp-session-id': 'left-over-from-a-2025-run' });
    try {
      for (const c of [stdio.client, http]) {
        const r = await c.callTool({ name: 'search', arguments: { query: 'kings number 3', top_k: 2 } });
        expect(textOf(r)).toMatch(/Doc 1 \[id p\d+#?\d*\]/);
        await expect(c.readResource({ uri: 'retriever://w/chunks/%ZZ' })).rejects.toMatchObject({ code: -32602 });
      }
    } finally {
      await stdio.close();
      await http.close();
    }
  });
});

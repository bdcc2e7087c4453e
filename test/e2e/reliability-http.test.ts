import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeJsonl } from '../helpers/build.js';
import { postJson, startHttpServer, type RunningServer } from '../helpers/http-server.js';
import { makeLongPassages, makeQueries } from '../helpers/long-passages.js';
import { runBin } from '../helpers/mcp.js';
import { BIN, makeTempDir } from '../helpers/paths.js';
import { exchange, httpRequest, openSocket, retrieveRequest, whenClosed } from '../helpers/raw-http.js';

// The outside probe's reproductions (issue "Reliability II"), each sent as real requests over real
// sockets to a real server process. The server runs with a 192 MB heap: the patterns that used to
// grow memory without bound abort it long before the test ends if any bound is missing.
const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'indexes');
let srv: RunningServer;

const metric = async (name: string, labels = ''): Promise<number> => {
  const text = await (await fetch(`${srv.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return Number(line?.split(' ')[1] ?? NaN);
};

beforeAll(async () => {
  const input = writeJsonl(tmp.dir, 'long.jsonl', makeLongPassages(800));
  const r = runBin(BIN.build, [
    ...['--name', 'long', '--input', input, '--format', 'wiki18'],
    ...['--index-dir', indexDir, '--no-dense', '--quiet'],
  ]);
  expect(r.status, r.stderr).toBe(0);
  srv = await startHttpServer(
    [
      ...['--corpus', 'long', '--index-dir', indexDir, '--cache-mb', '8'],
      ...['--max-connections', '64', '--header-timeout-ms', '1000'],
      ...['--max-sessions', '5', '--session-ttl-s', '2', '--allowed-hosts', 'my.lab'],
    ],
    { NODE_OPTIONS: '--max-old-space-size=192' },
  );
}, 120_000);
afterAll(async () => {
  await srv?.stop();
  tmp.cleanup();
});

describe('memory stays bounded whatever clients send', () => {
  it('caches distinct top-100 results within --cache-mb (a count-bounded cache ran out of heap)', async () => {
    const queries = makeQueries(400);
    for (let i = 0; i < queries.length; i += 8) {
      const batch = queries.slice(i, i + 8).map((q) => postJson(`${srv.url}/retrieve`, { queries: [q], topk: 100 }));
      for (const r of await Promise.all(batch)) expect(r.status).toBe(200);
    }
    expect((await fetch(`${srv.url}/health`)).status).toBe(200);
    const bytes = await metric('retriever_cache_bytes', '{cache="results"}');
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(8 * 2 ** 20);
    expect(await metric('retriever_cache_entries', '{cache="results"}')).toBeLessThan(400);
  }, 120_000);

  it('never turns a client string into a metric label, and never echoes it whole', async () => {
    for (let i = 0; i < 200; i++) {
      const mode = `zq${i}${'z'.repeat(20_000)}`;
      const r = await postJson(`${srv.url}/retrieve`, { queries: ['kalo'], mode });
      expect(r.status).toBe(400);
      expect(r.text.length).toBeLessThan(400);
      expect((r.json as unknown as { error: { message: string } }).error.message).toMatch(
        /"mode" must be one of hybrid, dense, bm25/,
      );
    }
    const m = await fetch(`${srv.url}/metrics`);
    expect(m.status).toBe(200);
    const text = await m.text();
    expect(text).not.toMatch(/zq\d/);
    expect(text.length).toBeLessThan(100_000);
  });

  it('answers JSON nested 100k deep in mode, topk or return_scores with 400, not a stack overflow', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    for (const field of ['mode', 'topk', 'return_scores']) {
      const r = await postJson(`${srv.url}/retrieve`, `{"queries":["kalo"],"${field}":${deep}}`);
      expect(r.status, field).toBe(400);
      expect(r.text.length).toBeLessThan(400);
    }
  });

  it('answers a stateless request named notifications/cancelled, and keeps nothing for it', async () => {
    const msg = { jsonrpc: '2.0', id: 1, method: 'notifications/cancelled', params: { requestId: 1 } };
    const headers = { accept: 'application/json, text/event-stream' };
    for (let i = 0; i < 300; i++) {
      const r = await postJson(`${srv.url}/mcp`, { ...msg, id: i }, headers);
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ id: i, error: { code: -32601 } });
    }
    // served by an instance a request: no session, nothing left behind
    expect(await metric('retriever_mcp_sessions')).toBe(0);
  });

  it('caps MCP sessions and expires idle ones (--max-sessions 5, --session-ttl-s 2)', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    };
    const headers = { accept: 'application/json, text/event-stream' };
    const ids: Array<string | null> = [];
    for (let i = 0; i < 8; i++) {
      const r = await postJson(`${srv.url}/mcp`, init, headers);
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ result: { serverInfo: { name: 'retriever-mcp' } } });
      ids.push(r.headers.get('mcp-session-id'));
    }
    expect(ids.filter((x) => x !== null)).toHaveLength(5); // the rest were answered without a session
    expect(await metric('retriever_mcp_sessions')).toBe(5);
    await new Promise((r) => setTimeout(r, 4500));
    expect(await metric('retriever_mcp_sessions')).toBe(0);
  });
});

describe('large answers', () => {
  it('writes a 40-query /retrieve answer one list a turn, equal to the queries answered one by one', async () => {
    const queries = makeQueries(40, 3, 77);
    const batch = await postJson(`${srv.url}/retrieve`, { queries, topk: 5, return_scores: true });
    expect(batch.status).toBe(200);
    expect(batch.headers.get('content-length')).toBeNull(); // streamed, not one JSON.stringify
    const lists = (batch.json as unknown as { result: unknown[] }).result;
    expect(lists).toHaveLength(40);
    for (const i of [0, 17, 39]) {
      const one = await postJson(`${srv.url}/retrieve`, { queries: [queries[i]], topk: 5, return_scores: true });
      expect(lists[i]).toEqual((one.json as unknown as { result: unknown[] }).result[0]);
    }
  });
});

describe('connections', () => {
  it('keeps answering /health and /retrieve past 200 silent sockets (--max-connections 64)', async () => {
    const silent = await Promise.all(Array.from({ length: 200 }, () => openSocket(srv.url)));
    const closed = silent.map((s) => whenClosed(s));
    expect((await httpRequest(`${srv.url}/health`)).status).toBe(200);
    const r = await postJson(`${srv.url}/retrieve`, { queries: ['kalo'] });
    expect(r.status).toBe(200);
    expect(await metric('retriever_open_connections')).toBeLessThanOrEqual(64);
    expect(await metric('retriever_evicted_connections_total')).toBeGreaterThanOrEqual(136);
    for (const s of silent) s.destroy();
    await Promise.all(closed);
  });

  it('closes a socket that sends no request within --header-timeout-ms', async () => {
    const s = await openSocket(srv.url);
    const t0 = Date.now();
    await whenClosed(s);
    expect(Date.now() - t0).toBeLessThan(10_000); // Node's default held such sockets ≈ 85 s
    const half = await openSocket(srv.url);
    half.write('POST /retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await whenClosed(half);
  });

  it('answers an oversized declared body with 413 and closes, without reading it', async () => {
    const s = await openSocket(srv.url);
    const done = whenClosed(s);
    const { host } = new URL(srv.url);
    s.write(
      `POST /retrieve HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 200000000\r\n\r\n`,
    );
    let written = 0;
    const chunk = Buffer.alloc(1 << 20, 32);
    while (!s.destroyed && written < 64 * 2 ** 20) {
      if (!s.write(chunk)) await new Promise((r) => setTimeout(r, 5));
      written += chunk.length;
    }
    const got = await done;
    expect(got).toMatch(/^HTTP\/1\.1 413/);
    expect(got.toLowerCase()).toMatch(/connection: close/);
    expect(written).toBeLessThan(64 * 2 ** 20); // the server closed long before 200 MB
  });

  it('answers a chunked body over the limit with 413 and closes the socket', async () => {
    const s = await openSocket(srv.url);
    const done = whenClosed(s);
    const { host } = new URL(srv.url);
    s.write(
      `POST /retrieve HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const piece = 'x'.repeat(65_536);
    for (let i = 0; i < 40 && !s.destroyed; i++) s.write(`${piece.length.toString(16)}\r\n${piece}\r\n`);
    const got = await done; // never sends the last chunk: the server must close on its own
    expect(got).toMatch(/^HTTP\/1\.1 413/);
  });
});

describe('DNS rebinding', () => {
  it('refuses a foreign Host on every route, and answers loopback names and --allowed-hosts', async () => {
    const { port } = new URL(srv.url);
    const body = JSON.stringify({ queries: ['kalo'] });
    const post = (host: string) =>
      httpRequest(`${srv.url}/retrieve`, {
        method: 'POST',
        headers: { host, origin: `http://${host}`, 'content-type': 'application/json' },
        body,
      });
    const evil = await post(`evil.example:${port}`);
    expect(evil.status).toBe(403);
    expect(evil.body).toMatch(/--allowed-hosts/);
    for (const path of ['/metrics', '/health', '/ready']) {
      expect((await httpRequest(`${srv.url}${path}`, { headers: { host: `evil.example:${port}` } })).status).toBe(403);
    }
    expect((await post(`127.0.0.1:${port}`)).status).toBe(200);
    expect((await post(`localhost:${port}`)).status).toBe(200);
    expect((await post(`my.lab:${port}`)).status).toBe(200);
  });
});

describe('binding', () => {
  it('binds 127.0.0.1 by default, and warns when bound elsewhere without a token', async () => {
    expect(srv.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // 127.0.0.2 is loopback to the kernel but not one of the loopback names: the warning's path, safely
    const other = await startHttpServer(['--corpus', 'long', '--index-dir', indexDir, '--host', '127.0.0.2']);
    try {
      expect(other.stderr()).toMatch(/listening on 127\.0\.0\.2 without --auth-token/);
      expect((await httpRequest(`${other.url}/health`)).status).toBe(200); // its own address is an allowed Host
    } finally {
      await other.stop();
    }
  });
});

describe('stopping', () => {
  it('answers a request on an idle keep-alive socket during the drain with 503 and Connection: close', async () => {
    const idx = indexDir;
    const s2 = await startHttpServer(['--corpus', 'long', '--index-dir', idx]);
    try {
      const sock = await openSocket(s2.url);
      const first = await exchange(sock, retrieveRequest(s2.url, { queries: ['kalo'] }));
      expect(first.status).toBe(200);
      const exited = s2.stop(); // SIGTERM
      await new Promise((r) => setTimeout(r, 300));
      const second = await exchange(sock, retrieveRequest(s2.url, { queries: ['kalo'] }));
      expect(second.status).toBe(503);
      expect(second.headers['connection']).toBe('close');
      expect(second.body).toMatch(/shutting down/);
      expect(await exited).toBe(0);
    } finally {
      s2.child.kill('SIGKILL');
    }
  });
});

import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../helpers/build.js';
import { postJson, startHttpServer, type RunningServer } from '../helpers/http-server.js';
import { runBin } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir, sharedPath } from '../helpers/paths.js';

// Reliability IV (issue 47, items 5-7): answer sizes and slow readers cannot exhaust the heap, and a
// stream whose client has gone is noticed. Before: eight 256-query top-100 answers at once aborted a
// 256 MB server ("JavaScript heap out of memory"), a stdio client that did not read grew the server
// by 45 KB a request until it aborted, and a dropped SSE client's session held its place for 600 s.
const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'indexes');
const questions = (): string[] =>
  readFileSync(sharedPath('data/2wiki-200/queries.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { question: string }).question);

beforeAll(async () => {
  if (!HAS_SHARED) return;
  const input = sharedPath('data/2wiki-200/corpus.jsonl');
  await build({ name: 'wiki2', input, format: 'wiki18', indexDir });
});
afterAll(tmp.cleanup);

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** POSTs until the answer is not a 503, waiting as Retry-After says; counts the 503s seen. */
async function untilAdmitted(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  refusals: { n: number; retryAfter: string[] },
): Promise<{ status: number; text: string }> {
  for (;;) {
    const r = await postJson(url, body, headers);
    if (r.status !== 503) return { status: r.status, text: r.text };
    refusals.n++;
    refusals.retryAfter.push(r.headers.get('retry-after') ?? '');
    await new Promise((res) => setTimeout(res, 200));
  }
}

/**
 * Reliability V, item 2: a corpus whose average passage is small (3,000 five-word records) but whose
 * hits can be large (100 records of about 100 KB, all holding "needle"): admitted by the average,
 * each answer weighed 21 MB against an estimate of 2.5 MB and a 256 MB server aborted.
 */
describe('answer memory follows the passages returned (Reliability V, item 2)', () => {
  const needles = join(tmp.dir, 'needles.jsonl');
  beforeAll(() => {
    const filler = 'word '.repeat(20_000); // about 100 KB
    const lines = [
      ...Array.from({ length: 3000 }, (_, i) => ({ id: `s${i}`, title: `s${i}`, text: `small record number ${i}` })),
      ...Array.from({ length: 100 }, (_, i) => ({ id: `n${i}`, title: `n${i}`, text: `needle ${i} ${filler}` })),
    ];
    writeFileSync(needles, lines.map((l) => JSON.stringify(l)).join('\n'));
    const r = runBin(BIN.build, [
      ...['--name', 'needles', '--input', needles, '--format', 'jsonl', '--index-dir', indexDir],
      ...['--chunk-size', '0', '--no-dense', '--quiet'],
    ]);
    expect(r.status, r.stderr).toBe(0);
  });

  it('eight 10-query top-100 /retrieve calls of large passages on a 256 MB heap: refused or answered, never an abort', async () => {
    const srv = await startHttpServer(['--corpus', 'needles', '--index-dir', indexDir, '--cache-size', '0'], {
      NODE_OPTIONS: '--max-old-space-size=256',
    });
    const refusals = { n: 0, retryAfter: [] as string[] };
    try {
      await Promise.all(
        Array.from({ length: 8 }, async (_, c) => {
          const queries = Array.from({ length: 10 }, (_, i) => `needle ${c} ${i}`);
          const r = await untilAdmitted(`${srv.url}/retrieve`, { queries, topk: 100 }, {}, refusals);
          expect(r.status, r.text.slice(0, 300)).toBe(200);
          expect((JSON.parse(r.text) as { result: unknown[][] }).result[9]).toHaveLength(100);
        }),
      );
      expect(srv.child.exitCode).toBeNull();
      expect(srv.stderr()).not.toMatch(/heap out of memory/);
      expect(refusals.n).toBeGreaterThan(0);
    } finally {
      await srv.stop();
    }
  }, 300_000);

  it('24 MCP searches at top_k 100 at once: each answered or refused with OVERLOADED, none aborts the server', async () => {
    const srv = await startHttpServer(['--corpus', 'needles', '--index-dir', indexDir, '--cache-size', '0'], {
      NODE_OPTIONS: '--max-old-space-size=256',
    });
    const headers = {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'search',
    };
    let refused = 0;
    try {
      await Promise.all(
        Array.from({ length: 24 }, async (_, c) => {
          for (;;) {
            const call = {
              jsonrpc: '2.0',
              id: c,
              method: 'tools/call',
              params: { name: 'search', arguments: { query: `needle ${c}`, top_k: 100 }, _meta: ENVELOPE },
            };
            const r = await postJson(`${srv.url}/mcp`, call, headers);
            const busy = r.status === 503 || /"isError":true/.test(r.text);
            if (busy) {
              expect(r.text).toMatch(/retry shortly/);
              refused++;
              await new Promise((res) => setTimeout(res, 200));
              continue;
            }
            expect(r.status).toBe(200);
            expect(
              (r.json as unknown as { result: { structuredContent: { results: unknown[] } } }).result.structuredContent
                .results,
            ).toHaveLength(100);
            return;
          }
        }),
      );
      expect(srv.child.exitCode).toBeNull();
      expect(srv.stderr()).not.toMatch(/heap out of memory/);
      expect(refused).toBeGreaterThan(0);
    } finally {
      await srv.stop();
    }
  }, 300_000);
});

describe.skipIf(!HAS_SHARED)('answer memory', () => {
  it('eight 256-query top-100 answers at once on a 256 MB heap: admitted by size, never an abort (item 5)', async () => {
    const srv: RunningServer = await startHttpServer(
      ['--corpus', 'wiki2', '--index-dir', indexDir, '--cache-size', '0'],
      {
        NODE_OPTIONS: '--max-old-space-size=256',
      },
    );
    const qs = questions();
    const refusals = { n: 0, retryAfter: [] as string[] };
    const batch = (c: number, round: number) =>
      Array.from({ length: 256 }, (_, i) => `${qs[(i + c * 7 + round * 13) % qs.length]} ${c} ${round} ${i}`);
    try {
      const rest = Array.from({ length: 8 }, async (_, c) => {
        const body = { queries: batch(c, 0), topk: 100, mode: 'bm25' };
        const r = await untilAdmitted(`${srv.url}/retrieve`, body, {}, refusals);
        expect(r.status).toBe(200);
        expect((JSON.parse(r.text) as { result: unknown[][] }).result[255]).toHaveLength(100);
      });
      const mcp = Array.from({ length: 2 }, async (_, c) => {
        const call = {
          jsonrpc: '2.0',
          id: c,
          method: 'tools/call',
          params: {
            name: 'batch_search',
            arguments: { queries: batch(c, 9), top_k: 100, mode: 'bm25' },
            _meta: ENVELOPE,
          },
        };
        const headers = {
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'batch_search',
        };
        const r = await untilAdmitted(`${srv.url}/mcp`, call, headers, refusals);
        expect(r.status).toBe(200);
        expect(r.text).not.toMatch(/"isError":true/);
      });
      await Promise.all([...rest, ...mcp]);
      expect(srv.child.exitCode).toBeNull();
      expect(srv.stderr()).not.toMatch(/heap out of memory/);
      // the budget did the work: some answers waited, each told when to come back
      expect(refusals.n).toBeGreaterThan(0);
      expect(refusals.retryAfter.every((v) => Number(v) >= 1)).toBe(true);
    } finally {
      await srv.stop();
    }
  }, 240_000);

  it('a stdio client that stops reading stops the server reading: memory stays flat (item 6)', async () => {
    const child = spawn(
      process.execPath,
      [BIN.server, '--corpus', 'wiki2', '--index-dir', indexDir, '--cache-size', '0'],
      {
        env: { ...process.env, NODE_OPTIONS: '--max-old-space-size=128' },
      },
    );
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.pause();
    child.stdin.on('error', () => undefined); // a server that died mid-write is the failure reported below
    const qs = questions();
    const N = 4000;
    const rssMb = (): number =>
      Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    try {
      void (async () => {
        for (let i = 0; i < N && child.exitCode === null; i++) {
          const call = {
            jsonrpc: '2.0',
            id: i,
            method: 'tools/call',
            params: { name: 'search', arguments: { query: `${qs[i % qs.length]} ${i}`, top_k: 10 }, _meta: ENVELOPE },
          };
          if (!child.stdin.write(`${JSON.stringify(call)}\n`)) await new Promise((r) => child.stdin.once('drain', r));
        }
      })();
      // 45 KB an answer: 4,000 unread answers were 180 MB, over the 128 MB heap
      const samples: number[] = [];
      for (let t = 0; t < 6; t++) {
        await new Promise((r) => setTimeout(r, 1000));
        expect(child.exitCode, err.slice(-500)).toBeNull();
        samples.push(rssMb());
      }
      const settled = samples.slice(2);
      expect(Math.max(...settled) - Math.min(...settled)).toBeLessThan(40);
      // reading again, every answer comes
      let lines = 0;
      let buf = '';
      child.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        let nl: number;
        while ((nl = buf.indexOf('\n')) !== -1) {
          lines++;
          buf = buf.slice(nl + 1);
        }
      });
      child.stdout.resume();
      for (let i = 0; i < 1200 && lines < N; i++) await new Promise((r) => setTimeout(r, 100));
      expect(lines).toBe(N);
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill();
    }
  }, 200_000);
});

/** Opens a raw GET stream and resolves with the socket once the status line and headers arrived. */
function openStream(
  url: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ s: Socket; head: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname);
    const lines = Object.entries({ host: `${hostname}:${port}`, accept: 'text/event-stream', ...headers })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    s.write(`GET ${path} HTTP/1.1\r\n${lines}\r\n`);
    let got = '';
    s.on('data', (d: Buffer) => {
      got += d.toString();
      if (got.includes('\r\n\r\n')) resolve({ s, head: got });
    });
    s.once('error', reject);
  });
}

describe.skipIf(!HAS_SHARED)('dead streams (item 7)', () => {
  it('a dropped SSE client frees its session at once: the gauge falls, a new stream opens, its id is gone', async () => {
    const srv = await startHttpServer(['--corpus', 'wiki2', '--index-dir', indexDir, '--max-sessions', '50']);
    try {
      const streams = await Promise.all(Array.from({ length: 60 }, () => openStream(srv.url, '/sse')));
      expect(streams.filter((x) => x.head.startsWith('HTTP/1.1 200')).length).toBe(50);
      const dropped = /sessionId=([0-9a-f-]{36})/.exec(streams.map((x) => x.head).join(''))?.[1];
      expect(dropped).toBeDefined();
      for (const { s } of streams) s.end(); // the client's FIN, as a killed client's kernel sends
      let gauge = -1;
      for (let i = 0; i < 30 && gauge !== 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        const m = await (await fetch(`${srv.url}/metrics`)).text();
        gauge = Number(/^retriever_mcp_sessions (\d+)/m.exec(m)?.[1]);
      }
      expect(gauge).toBe(0);
      const again = await openStream(srv.url, '/sse');
      expect(again.head).toMatch(/^HTTP\/1.1 200/);
      again.s.destroy();
      const late = await postJson(`${srv.url}/messages?sessionId=${dropped}`, {
        jsonrpc: '2.0',
        id: 1,
        method: 'ping',
      });
      expect(late.status).toBe(404);
    } finally {
      await srv.stop();
    }
  }, 60_000);

  it("a dropped 2025 session's GET /mcp stream can be opened again at once", async () => {
    const srv = await startHttpServer(['--corpus', 'wiki2', '--index-dir', indexDir]);
    try {
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
      const sid = init.headers.get('mcp-session-id') as string;
      const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
      const first = await openStream(srv.url, '/mcp', headers);
      expect(first.head).toMatch(/^HTTP\/1.1 200/);
      first.s.end();
      await new Promise((r) => setTimeout(r, 300));
      const second = await openStream(srv.url, '/mcp', headers);
      expect(second.head).toMatch(/^HTTP\/1.1 200/);
      second.s.destroy();
    } finally {
      await srv.stop();
    }
  }, 60_000);
});

/**
 * The verl pattern in each MCP era: a new client for every call (verl's MCP
 * tool opens a client per tool call), `--concurrency` (64) at once, one
 * `search` each, against a fresh server per mode; calls per second, latency,
 * and the server's resident memory after `--calls` (100k) calls.
 *
 * - `2025`: the 1.x SDK client, Streamable HTTP: initialize (a session),
 *   notifications/initialized, tools/call, DELETE (session end), as
 *   FastMCP's client does on exit;
 * - `2026`: the v2 SDK client pinned to 2026-07-28: server/discover, then
 *   tools/call, no session;
 * - `2026-cached`: the same, with a server/discover result kept from the
 *   first call (`connect({ prior })`): one round trip a call.
 *
 * The corpus is BM25-only (2k passages of 500 words), so what differs is the
 * protocol. Clients and server share the machine; the ratio is the figure.
 *
 * Then (`--part long-lived`) the other pattern, one client kept for every
 * call, as RL frameworks that hold a client per worker do: raw JSON-RPC (so
 * the figure is the server's, not a client library's), over HTTP and stdio,
 * 1 and 32 calls in flight. A 2025 session (initialize once, then calls with
 * its `Mcp-Session-Id`) against 2026 stateless calls (each with the `_meta`
 * envelope and the 2026 headers), in alternating blocks of `--block` calls
 * over `--rounds` rounds on the same server (stdio: one server process for
 * each era). Writes bench/results/mcp-eras-long-lived.json.
 *
 *   npm run bench -- mcp-eras [--part verl|long-lived|all] [--calls 100000 --concurrency 64]
 *                             [--block 1000 --rounds 5]
 */
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
  type DiscoverResult,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { arg, printTable, ROOT, summarize, writeResult } from '../lib/common.js';
import { ensureLongIndex, makeQueries } from '../lib/long-passages.js';
import { rssOf, startServer } from '../lib/server.js';

const part = arg('part', 'all') as 'verl' | 'long-lived' | 'all';
const calls = Number(arg('calls', '100000'));
const concurrency = Number(arg('concurrency', '64'));
const MODES = ['2025', '2026', '2026-cached'] as const;
type Mode = (typeof MODES)[number];

const { indexDir, name } = ensureLongIndex(2_000);
const queries = makeQueries(5_000, 3, 7);
const info = { name: 'mcp-eras', version: '0' };
const PIN = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;

/** One tool call through a client made for it; resolves with whether it answered hits. */
async function oneCall(mode: Mode, url: URL, query: string, prior: DiscoverResult | undefined): Promise<boolean> {
  const args = { name: 'search', arguments: { query, top_k: 3 } };
  if (mode === '2025') {
    const transport = new StreamableHTTPClientTransport(url);
    const c = new Client(info);
    await c.connect(transport);
    try {
      const r = await c.callTool(args);
      return !r.isError;
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await c.close();
    }
  }
  const c = new ModernClient(info, PIN);
  await c.connect(new ModernHttp(url), prior ? { prior: { kind: 'modern', discover: prior } } : undefined);
  try {
    const r = await c.callTool(args);
    return !r.isError;
  } finally {
    await c.close();
  }
}

async function run(mode: Mode): Promise<Record<string, number | string>> {
  const srv = await startServer(['--corpus', name, '--index-dir', indexDir]);
  const url = new URL(`${srv.url}/mcp`);
  let prior: DiscoverResult | undefined;
  if (mode === '2026-cached') {
    const c = new ModernClient(info, PIN);
    await c.connect(new ModernHttp(url));
    prior = c.getDiscoverResult();
    await c.close();
  }
  const rssStart = rssOf(srv.pid);
  const ms: number[] = [];
  let next = 0;
  let failed = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < calls; i = next++) {
        const t = performance.now();
        const ok = await oneCall(mode, url, queries[i % queries.length] as string, prior).catch(() => false);
        ms.push(performance.now() - t);
        if (!ok) failed++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  // what stays resident once the calls are done: sessions closed, nothing in flight
  await new Promise((r) => setTimeout(r, 2000));
  const rssEnd = rssOf(srv.pid);
  await srv.stop();
  const s = summarize(ms);
  return {
    mode,
    calls,
    failed,
    'calls/s': Math.round(calls / seconds),
    'p50 ms': Number(s.p50.toFixed(1)),
    'p99 ms': Number(s.p99.toFixed(1)),
    'RSS start MiB': Math.round(rssStart),
    'RSS after MiB': Math.round(rssEnd),
  };
}

if (part !== 'long-lived') {
  const rows: Array<Record<string, number | string>> = [];
  for (const mode of MODES) {
    process.stderr.write(`mcp-eras: ${mode}, ${calls} calls, ${concurrency} at once\n`);
    rows.push(await run(mode));
  }
  printTable(`The verl pattern (a new MCP client a call, ${concurrency} at once), by protocol era`, rows);
  const rate = (m: Mode) => Number(rows.find((r) => r['mode'] === m)?.['calls/s']);
  writeResult('mcp-eras', {
    calls,
    concurrency,
    corpus: name,
    rows,
    ratio_2026_to_2025: Number((rate('2026') / rate('2025')).toFixed(2)),
    ratio_2026_cached_to_2025: Number((rate('2026-cached') / rate('2025')).toFixed(2)),
  });
}

// ---- one client kept for every call: raw JSON-RPC, each era, HTTP and stdio ----

type Era = '2025' | '2026';
/** Sends one `search` call and resolves with the answer's JSON-RPC object. */
type Caller = (id: number, query: string) => Promise<{ result?: { isError?: boolean }; error?: unknown }>;

const V2025 = '2025-11-25';
const V2026 = '2026-07-28';
const searchParams = (query: string, era: Era): Record<string, unknown> => ({
  name: 'search',
  arguments: { query, top_k: 3 },
  ...(era === '2026'
    ? {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': V2026,
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      }
    : {}),
});

/** A JSON answer, or the one `data:` line of an SSE answer (the 2025 transport may answer either way). */
async function answerOf(r: Response): Promise<{ result?: { isError?: boolean }; error?: unknown }> {
  const text = await r.text();
  if (!(r.headers.get('content-type') ?? '').includes('text/event-stream')) return JSON.parse(text) as never;
  const data = text.split('\n').find((l) => l.startsWith('data: '));
  if (!data) throw new Error(`an SSE answer without data: ${text.slice(0, 200)}`);
  return JSON.parse(data.slice(6)) as never;
}

async function httpCaller(url: string, era: Era): Promise<{ call: Caller; close: () => Promise<void> }> {
  const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const post = (headers: Record<string, string>, message: unknown): Promise<Response> =>
    fetch(url, { method: 'POST', headers, body: JSON.stringify(message) });
  let headers: Record<string, string>;
  if (era === '2026') {
    headers = { ...base, 'mcp-protocol-version': V2026, 'mcp-method': 'tools/call', 'mcp-name': 'search' };
  } else {
    const init = await post(base, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: V2025, capabilities: {}, clientInfo: info },
    });
    const sid = init.headers.get('mcp-session-id');
    await answerOf(init);
    if (!sid) throw new Error('initialize gave no Mcp-Session-Id');
    headers = { ...base, 'mcp-session-id': sid, 'mcp-protocol-version': V2025 };
    await (await post(headers, { jsonrpc: '2.0', method: 'notifications/initialized' })).arrayBuffer();
  }
  return {
    call: async (id, query) =>
      answerOf(await post(headers, { jsonrpc: '2.0', id, method: 'tools/call', params: searchParams(query, era) })),
    // a 2025 session ends with DELETE; 2026 has none to end
    close: async () => {
      if (era === '2025') await fetch(url, { method: 'DELETE', headers }).catch(() => undefined);
    },
  };
}

/** A stdio server of its own for one era: newline-delimited JSON-RPC, answers matched by id. */
async function stdioCaller(era: Era): Promise<{ call: Caller; close: () => Promise<void> }> {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin/retriever-mcp.js'), '--corpus', name, '--index-dir', indexDir, '--log-level', 'warn'],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const waiting = new Map<number, (a: never) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const a = JSON.parse(line) as { id?: number };
    if (typeof a.id === 'number') waiting.get(a.id)?.(a as never);
    if (typeof a.id === 'number') waiting.delete(a.id);
  });
  const send = (id: number, method: string, params: unknown): Promise<never> =>
    new Promise((resolve) => {
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  if (era === '2025') {
    await send(-1, 'initialize', { protocolVersion: V2025, capabilities: {}, clientInfo: info });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  }
  const call: Caller = (id, query) => send(id, 'tools/call', searchParams(query, era));
  // the first call waits for the server to be ready
  const first = (await call(-2, 'warm up')) as { result?: unknown; error?: unknown };
  if (!first.result) throw new Error(`stdio ${era}: ${JSON.stringify(first)}`);
  return {
    call,
    close: async () => {
      child.stdin.end();
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** `n` calls, `inFlight` at a time; the time each took. */
async function block(call: Caller, n: number, inFlight: number, from: number): Promise<number[]> {
  const ms: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (let i = next++; i < n; i = next++) {
        const t = performance.now();
        const a = await call(from + i, queries[(from + i) % queries.length] as string);
        if (!a.result || a.result.isError) throw new Error(`a call failed: ${JSON.stringify(a).slice(0, 300)}`);
        ms.push(performance.now() - t);
      }
    }),
  );
  return ms;
}

if (part !== 'verl') {
  const blockSize = Number(arg('block', '1000'));
  const rounds = Number(arg('rounds', '5'));
  const longRows: Array<Record<string, number | string>> = [];
  for (const transport of ['http', 'stdio'] as const) {
    for (const inFlight of [1, 32]) {
      process.stderr.write(`mcp-eras long-lived: ${transport}, ${inFlight} in flight\n`);
      const srv = transport === 'http' ? await startServer(['--corpus', name, '--index-dir', indexDir]) : undefined;
      const callers = new Map<Era, { call: Caller; close: () => Promise<void> }>();
      for (const era of ['2025', '2026'] as const) {
        callers.set(era, srv ? await httpCaller(`${srv.url}/mcp`, era) : await stdioCaller(era));
      }
      const seconds = new Map<Era, number>([
        ['2025', 0],
        ['2026', 0],
      ]);
      const lat = new Map<Era, number[]>([
        ['2025', []],
        ['2026', []],
      ]);
      let id = 1;
      for (const era of ['2025', '2026'] as const) await block(callers.get(era)!.call, 100, inFlight, (id += 100)); // warm
      for (let r = 0; r < rounds; r++) {
        // alternate which era goes first, so a drift of the machine hits both alike
        for (const era of r % 2 === 0 ? (['2025', '2026'] as const) : (['2026', '2025'] as const)) {
          const t0 = performance.now();
          lat.get(era)!.push(...(await block(callers.get(era)!.call, blockSize, inFlight, (id += blockSize))));
          seconds.set(era, seconds.get(era)! + (performance.now() - t0) / 1000);
        }
      }
      for (const c of callers.values()) await c.close();
      await srv?.stop();
      const rate = (era: Era) => (rounds * blockSize) / seconds.get(era)!;
      const p50 = (era: Era) => summarize(lat.get(era)!).p50;
      longRows.push({
        transport,
        'in flight': inFlight,
        '2025 session calls/s': Math.round(rate('2025')),
        '2026 calls/s': Math.round(rate('2026')),
        '2026 ÷ 2025': Number((rate('2026') / rate('2025')).toFixed(2)),
        '2025 p50 ms': Number(p50('2025').toFixed(2)),
        '2026 p50 ms': Number(p50('2026').toFixed(2)),
      });
    }
  }
  printTable('One client kept for every call, raw JSON-RPC, by protocol era', longRows);
  writeResult('mcp-eras-long-lived', {
    corpus: name,
    block: blockSize,
    rounds,
    rows: longRows,
  });
}

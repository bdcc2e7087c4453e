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
 *   npm run bench -- mcp-eras [--calls 100000 --concurrency 64]
 */
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
  type DiscoverResult,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { arg, printTable, summarize, writeResult } from '../lib/common.js';
import { ensureLongIndex, makeQueries } from '../lib/long-passages.js';
import { rssOf, startServer } from '../lib/server.js';

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

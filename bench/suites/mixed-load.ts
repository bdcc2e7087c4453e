/**
 * Mixed load: `connections` clients (256 by default) for `seconds` (60), split
 * over every kind of request a search agent's rollouts send at once: Search-R1's
 * `POST /retrieve` (one query), the same with a batch of 8 queries, a 2026 MCP
 * `search` (stateless, one POST), a 2025 MCP `search` inside a session (one
 * session a client) and a 2026 MCP `fetch` with `around: 1`. The tiny e5 over
 * 2Wiki's 1,585 passages, hybrid, result cache off, so each call does its work.
 * One wrk a kind, all at once; each kind's latency is its own. Errors are
 * non-2xx answers, socket errors and 200 answers carrying an error.
 *
 *   npm run bench -- mixed-load [--connections 256 --seconds 60]
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { arg, BENCH_DATA, printTable, SHARED, writeResult } from '../lib/common.js';
import { buildWiki18Index } from '../lib/child.js';
import { rssOf, startServer } from '../lib/server.js';
import { runWrkMixed, type WrkKind } from '../lib/wrk.js';

const connections = Number(arg('connections', '256'));
const seconds = Number(arg('seconds', '60'));
const model = join(SHARED, 'models/tiny-e5');
const corpus = join(SHARED, 'data/2wiki-200/corpus.jsonl');
const indexDir = join(BENCH_DATA, 'mixed-load-indexes');
if (!existsSync(join(indexDir, 'wiki2', 'manifest.json'))) {
  buildWiki18Index('wiki2', corpus, indexDir, ['--model-path', model, '--no-progress']);
}
const questions = readFileSync(join(SHARED, 'data/2wiki-200/queries.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => (JSON.parse(l) as { question: string }).question);
const passages = readFileSync(corpus, 'utf8').trim().split('\n').length;

const srv = await startServer([
  '--corpus',
  'wiki2',
  '--index-dir',
  indexDir,
  '--model-path',
  model,
  '--cache-size',
  '0',
]);
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'mixed-load', version: '0' },
};
const MCP_ACCEPT = { Accept: 'application/json, text/event-stream' };

const names = ['retrieve', 'retrieve batch of 8', '2026 search', '2025 session search', '2026 fetch'] as const;
// the clients split as evenly as they go, the first kinds taking the remainder
const share = (i: number): number => Math.floor(connections / names.length) + (i < connections % names.length ? 1 : 0);

/** One 2025 session per client of that kind: initialize, then notifications/initialized. */
async function openSession(): Promise<string> {
  const init = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...MCP_ACCEPT },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'mixed-load', version: '0' } },
    }),
  });
  const sid = init.headers.get('mcp-session-id');
  await init.text();
  if (!init.ok || !sid) throw new Error(`initialize failed: ${init.status}`);
  const note = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'mcp-session-id': sid,
      'mcp-protocol-version': '2025-11-25',
      ...MCP_ACCEPT,
    },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await note.text();
  return sid;
}
const sessions = await Promise.all(Array.from({ length: share(3) }, () => openSession()));

const searchCall = (q: string, i: number, meta?: object): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: i,
    method: 'tools/call',
    params: { name: 'search', arguments: { query: q, top_k: 5 }, ...(meta ? { _meta: meta } : {}) },
  });
const kinds: WrkKind[] = [
  {
    name: 'retrieve',
    path: '/retrieve',
    headers: {},
    bodies: questions.map((q) => JSON.stringify({ queries: [q], topk: 3 })),
    connections: share(0),
  },
  {
    name: 'retrieve-batch',
    path: '/retrieve',
    headers: {},
    bodies: questions.map((_, i) =>
      JSON.stringify({ queries: Array.from({ length: 8 }, (_, j) => questions[(i + j) % questions.length]), topk: 3 }),
    ),
    connections: share(1),
  },
  {
    name: 'search-2026',
    path: '/mcp',
    headers: { ...MCP_ACCEPT, 'Mcp-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'search' },
    bodies: questions.map((q, i) => searchCall(q, i, ENVELOPE)),
    connections: share(2),
  },
  {
    name: 'search-2025',
    path: '/mcp',
    headers: { ...MCP_ACCEPT, 'Mcp-Protocol-Version': '2025-11-25' },
    bodies: questions.map((q, i) => searchCall(q, i)),
    headerChoices: { header: 'Mcp-Session-Id', values: sessions },
    connections: share(3),
  },
  {
    name: 'fetch-2026',
    path: '/mcp',
    headers: { ...MCP_ACCEPT, 'Mcp-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'fetch' },
    bodies: Array.from({ length: passages }, (_, i) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: { name: 'fetch', arguments: { id: String(i), around: 1 }, _meta: ENVELOPE },
      }),
    ),
    connections: share(4),
  },
];

const results = await runWrkMixed(srv.url, kinds, seconds);
const rssAfter = rssOf(srv.pid);
const alive = srv.child.exitCode === null;
await srv.stop();

const rows = kinds.map((k, i) => {
  const w = results.get(k.name);
  if (!w) throw new Error(`no result for ${k.name}`);
  return {
    kind: names[i] as string,
    clients: k.connections,
    calls: w.requests,
    'calls/s': w.rps,
    'p50 ms': w.p50ms,
    'p99 ms': w.p99ms,
    'p99 ÷ p50': w.p99ms / w.p50ms,
    errors: w.non2xx + w.socketErrors + (w.appErrors ?? 0),
  };
});
printTable(`Mixed load: ${connections} clients for ${seconds} s, five kinds at once (tiny e5, 2Wiki, hybrid)`, rows);
writeResult('mixed-load', {
  connections,
  seconds,
  errors: rows.reduce((a, r) => a + r.errors, 0),
  calls: rows.reduce((a, r) => a + r.calls, 0),
  'server alive at end': alive,
  'RSS at end MiB': Math.round(rssAfter),
  rows,
});

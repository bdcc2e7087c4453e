/**
 * Server overhead per request with the encoder stubbed out through our own
 * QueryEncoder interface: HTTP + MCP (stateless Streamable HTTP) or REST +
 * fusion + SQLite fetch, measured on the server (from the request event to
 * the response's last byte) minus the time spent in the two retrieval arms
 * (BM25 postings, HNSW + rescoring), which are timed separately. The client's
 * round trip (Node's fetch in the same process) is shown beside it.
 * Sequential requests, in-process, 100k-chunk hybrid index.
 *
 *   npm run bench -- overhead [--requests 2000] [--route mcp|rest]
 */
import type { AddressInfo } from 'node:net';
import { RetrieverSlot } from '../../src/server/mcp/retriever-slot.js';
import type { QueryEncoder } from '../../src/core/contracts.js';
import { AnswerBudget } from '../../src/server/admission.js';
import { createHttpApp } from '../../src/server/transports/http/http-app.js';
import { createServerMetrics } from '../../src/server/server-metrics.js';
import { silentLogger } from '../../src/util/log.js';
import { arg, printTable, summarize, writeResult } from '../lib/common.js';
import { ensureLoadIndex, LOAD_INDEX_DIR } from '../lib/load-index.js';
import { loadRealQuestions } from '../lib/queries.js';
import { benchRetriever, openBenchCorpus } from '../lib/retriever.js';
import { makeGenerator } from '../lib/vectors.js';

const N = Number(arg('requests', '2000'));
ensureLoadIndex();
const corpus = openBenchCorpus(LOAD_INDEX_DIR, 'load100k');
// query vectors drawn up front: sampling a clustered vector costs ≈ 0.2 ms, which is the stub's time, not the server's
const gen = makeGenerator('clustered', 768, 99);
const pool = Array.from({ length: 512 }, () => gen());
let drawn = 0;
const stub: QueryEncoder = {
  id: 'stub',
  dim: 768,
  embedQueries: async (texts) => texts.map(() => pool[drawn++ % pool.length] as Float32Array),
};

// time inside the arms, summed per request (requests run one at a time)
let armMs = 0;
const wrap =
  <A extends unknown[], R>(fn: (...a: A) => R): ((...a: A) => R) =>
  (...a: A) => {
    const t = performance.now();
    try {
      return fn(...a);
    } finally {
      armMs += performance.now() - t;
    }
  };
const bm25 = corpus.bm25;
bm25.search = wrap(bm25.search.bind(bm25));
const dense = corpus.dense!;
dense.searchMany = wrap(dense.searchMany.bind(dense)); // the retriever's entry to the dense arm

const retriever = benchRetriever(corpus, stub, 3);
const app = createHttpApp({
  http: {
    allowedOrigins: [],
    corsOrigins: [],
    maxBodyBytes: 1 << 20,
    allowedHosts: ['127.0.0.1'],
    connections: { maxConnections: 4096, headersTimeoutMs: 10_000 },
  },
  admission: { maxInFlight: 1024, deadlineMs: 30_000 },
  answers: new AnswerBudget(64 * 2 ** 20),
  mcp: { stateless: true, sessionTtlMs: 60_000, maxSessions: 10 },
  maxBatchQueries: 256,
  metrics: createServerMetrics(),
  log: silentLogger,
  slot: new RetrieverSlot(retriever.opts, [corpus.name]),
});
app.attach(retriever);
const server = app.server;
// server-side time of the request being measured: from the request event to the response's last byte
let serverMs = 0;
server.prependListener('request', (_req, res) => {
  const t = performance.now();
  res.on('finish', () => (serverMs = performance.now() - t));
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const queries = loadRealQuestions();

const routes: Record<string, (q: string) => { path: string; body: unknown; headers: Record<string, string> }> = {
  'MCP tools/call (stateless HTTP)': (q) => ({
    path: '/mcp',
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'search', arguments: { query: q, top_k: 3, mode: 'hybrid' } },
    },
    headers: { accept: 'application/json, text/event-stream' },
  }),
  'REST /retrieve': (q) => ({ path: '/retrieve', body: { queries: [q], topk: 3, mode: 'hybrid' }, headers: {} }),
};
const rows: Array<Record<string, string | number>> = [];
// --route mcp|rest measures one route only (for a CPU profile of it)
const only = arg('route', '') as string;
for (const [label, make] of Object.entries(routes)) {
  if (only && !label.toLowerCase().includes(only)) continue;
  const total: number[] = [];
  const arms: number[] = [];
  const over: number[] = [];
  const serverSide: number[] = [];
  for (let i = 0; i < N + 200; i++) {
    const q = queries[i % queries.length] as string;
    const { path, body, headers } = make(q);
    armMs = 0;
    const t = performance.now();
    const r = await fetch(url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    await r.text();
    const ms = performance.now() - t;
    if (r.status !== 200) throw new Error(`${label}: HTTP ${r.status}`);
    if (i < 200) continue; // warm-up
    total.push(ms);
    arms.push(armMs);
    serverSide.push(serverMs);
    over.push(serverMs - armMs);
  }
  const [t, sv, a, o] = [summarize(total), summarize(serverSide), summarize(arms), summarize(over)];
  rows.push({
    route: label,
    requests: N,
    'round trip p50 ms': t.p50,
    'server p50 ms': sv.p50,
    'arms p50 ms': a.p50,
    'server overhead p50 ms': o.p50,
    'server overhead p99 ms': o.p99,
  });
}
server.close();
printTable('Per-request server overhead with a stub encoder (100k-chunk hybrid index, sequential, in-process)', rows);
writeResult('overhead', { rows });
process.exit(0);

/**
 * Is the event loop free under BM25 load? The outside probe's two loads on a
 * BM25 index of 20k passages of 500 words: 8 clients sending 256-query
 * batches back to back, and 256 clients sending one query each; /health is
 * polled every 20 ms meanwhile. Then the same batch load against a server
 * with --max-inflight 4, timing how long its 503 refusals take. Goal:
 * /health p99 ≤ 50 ms and 503s within 50 ms.
 *
 *   npm run bench -- event-loop-bm25 [--seconds 20]
 */
import { arg, printTable, summarize, writeResult } from '../lib/common.js';
import { ensureLongIndex, makeQueries } from '../lib/long-passages.js';
import { startServer, type BenchServer } from '../lib/server.js';

const seconds = Number(arg('seconds', '20'));
const { indexDir, name } = ensureLongIndex(20_000);
const queries = makeQueries(20_000, 4, 3);
/** Extra server flags, e.g. --extra '--cache-mb 0' (space-separated). */
const extra = (arg('extra', '') as string).split(' ').filter(Boolean);
const only = arg('only', '') as string;

async function retrieve(srv: BenchServer, qs: string[]): Promise<{ status: number; ms: number }> {
  const t = performance.now();
  const r = await fetch(`${srv.url}/retrieve`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ queries: qs, topk: 10, mode: 'bm25' }),
  });
  await r.arrayBuffer();
  return { status: r.status, ms: performance.now() - t };
}

/** Runs `clients` loops of `batch`-query requests for `seconds`, polling /health every 20 ms. */
async function load(srv: BenchServer, clients: number, batch: number) {
  const end = Date.now() + seconds * 1000;
  let cursor = 0;
  const ok: number[] = [];
  const refused: number[] = [];
  const loops = Array.from({ length: clients }, async () => {
    while (Date.now() < end) {
      const qs = Array.from({ length: batch }, () => queries[cursor++ % queries.length] as string);
      const r = await retrieve(srv, qs);
      (r.status === 200 ? ok : refused).push(r.ms);
    }
  });
  const health: number[] = [];
  const poller = (async () => {
    while (Date.now() < end) {
      const t = performance.now();
      await (await fetch(`${srv.url}/health`)).arrayBuffer();
      health.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  await Promise.all([...loops, poller]);
  return { ok, refused, health };
}

const rows: Array<Record<string, string | number>> = [];
/** The server's own event-loop delay p99 and max, ms (its /metrics), apart from the client's scheduling. */
async function serverLoopDelay(srv: BenchServer): Promise<{ p99: number; max: number }> {
  const text = await (await fetch(`${srv.url}/metrics`)).text();
  const q = (quantile: string): number =>
    1000 * Number(new RegExp(`nodejs_eventloop_delay_seconds\\{quantile="${quantile}"\\} (\\S+)`).exec(text)?.[1]);
  return { p99: q('0.99'), max: q('1') };
}

const row = (
  loadName: string,
  r: Awaited<ReturnType<typeof load>>,
  batch: number,
  loop: { p99: number; max: number },
): void => {
  const h = summarize(r.health);
  const refused = summarize(r.refused);
  rows.push({
    load: loadName,
    'queries/s': Math.round((r.ok.length * batch) / seconds),
    'health p50 ms': h.p50,
    'health p99 ms': h.p99,
    'health max ms': Math.max(...r.health),
    '503s': r.refused.length,
    '503 p99 ms': r.refused.length > 0 ? refused.p99 : '—',
    'server loop delay p99 ms': loop.p99,
    'server loop delay max ms': loop.max,
  });
};

const loads: Array<[string, string[], number, number]> = [
  ['8 clients × 256-query batches', [], 8, 256],
  ['256 clients × 1 query', [], 256, 1],
  ['8 × 256-query batches, --max-inflight 4', ['--max-inflight', '4'], 8, 256],
  ['256 × 1 query, --max-inflight 4', ['--max-inflight', '4'], 256, 1],
];
for (const [label, flags, clients, batch] of loads) {
  if (only && !label.includes(only)) continue;
  const srv = await startServer(['--corpus', name, '--index-dir', indexDir, ...flags, ...extra]);
  const result = await load(srv, clients, batch);
  row(label, result, batch, await serverLoopDelay(srv));
  await srv.stop();
}

printTable(`Event loop under BM25 load (20k passages of 500 words, top-10, ${seconds} s a row)`, rows);
writeResult(`event-loop-bm25${only || extra.length ? '-probe' : ''}`, { seconds, extra, rows });

/**
 * Is the event loop free while the encoder works? 64 clients keep hybrid
 * searches in flight (a BERT-base-shaped encoder on CPU: each batch takes
 * hundreds of ms) while /health is polled every 20 ms; if inference ran on
 * the event loop, /health would wait for whole batches.
 *
 *   npm run bench -- event-loop [--seconds 30]
 */
import { arg, printTable, summarize, writeResult } from '../lib/common.js';
import { loadRealQuestions } from '../lib/queries.js';
import { ensureLoadIndex, loadServerArgs } from '../lib/load-index.js';
import { startServer } from '../lib/server.js';

const seconds = Number(arg('seconds', '30'));
ensureLoadIndex();
const srv = await startServer(loadServerArgs());
const queries = loadRealQuestions();
const end = Date.now() + seconds * 1000;
let searches = 0;
const searchLat: number[] = [];
const clients = Array.from({ length: 64 }, async (_, c) => {
  for (let i = c; Date.now() < end; i += 64) {
    const t = performance.now();
    const r = await fetch(`${srv.url}/retrieve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ queries: [queries[i % queries.length]], topk: 3, mode: 'hybrid' }),
    });
    await r.text();
    searchLat.push(performance.now() - t);
    searches++;
  }
});
const health: number[] = [];
const poller = (async () => {
  while (Date.now() < end) {
    const t = performance.now();
    await (await fetch(`${srv.url}/health`)).text();
    health.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 20));
  }
})();
await Promise.all([...clients, poller]);
const metrics = await (await fetch(`${srv.url}/metrics`)).text();
await srv.stop();
const h = summarize(health);
const s = summarize(searchLat);
const batches = Number(/retriever_encoder_batch_size_count (\d+)/.exec(metrics)?.[1]);
const rows = [
  {
    seconds,
    searches,
    'search p50 ms': s.p50,
    'encoder batches': batches,
    'mean batch ms': (seconds * 1000) / batches,
    '/health polls': health.length,
    '/health p50 ms': h.p50,
    '/health p99 ms': h.p99,
    '/health max ms': Math.max(...health),
  },
];
printTable('Event loop while the encoder is saturated (64 concurrent hybrid searches, BERT-base-shaped encoder)', rows);
writeResult('event-loop', { rows });

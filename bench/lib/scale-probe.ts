/**
 * Child process for scale.ts: opens one large index (memory-mapped HNSW,
 * on-disk postings and vectors) and measures, with query vectors supplied
 * through our QueryEncoder interface (the encoder excluded, as the target
 * says): dense recall@10/@5 against exact search at several efSearch values,
 * dense QPS one query at a time and in batches of 100 (`searchMany`, the
 * graph walked on every core), BM25 and hybrid latency, and resident memory.
 */
import { readFileSync } from 'node:fs';
import { DEFAULTS } from '../../src/config.js';
import { arg, rssMiB, summarize } from './common.js';
import { loadRealQuestions } from './queries.js';
import { benchRetriever, openBenchCorpus, precomputedEncoder } from './retriever.js';
import { readVectors } from './vectors.js';

const indexDir = arg('index-dir') as string;
const name = arg('name') as string;
const dim = 768;
const qv = readVectors(arg('queries') as string, dim);
const nq = qv.length / dim;
const truth = new Int32Array(readFileSync(arg('truth') as string).buffer.slice(0));
const tk = truth.length / nq;
const efs = (arg('efs', '16,32,64,128') as string).split(',').map(Number);
// BM25 and hybrid are timed once, at this efSearch (default: the last)
const hybridEf = Number(arg('hybrid-ef', String(efs[efs.length - 1])));
const texts = loadRealQuestions().slice(0, nq);
const bm25Threads = Number(arg('bm25-threads', '1'));
// graph candidates re-scored per hit, as the server's --rescore-factor
const rescoreFactor = Number(arg('rescore-factor', String(DEFAULTS.rescoreFactor)));

const out: Record<string, unknown> = { rssStartMiB: rssMiB() };
const recall: Array<Record<string, number>> = [];
for (const ef of efs) {
  const t0 = performance.now();
  // hybrid's BM25 arm split with a worker thread, as the server does
  const c = openBenchCorpus(indexDir, name, { ef, bm25Threads, rescoreFactor });
  const openMs = performance.now() - t0;
  const dense = c.dense!;
  for (let i = 0; i < Math.min(100, nq); i++) dense.search(qv.subarray(i * dim, (i + 1) * dim), 10); // warm
  let hit10 = 0;
  let hit5 = 0;
  const lat: number[] = [];
  const start = performance.now();
  for (let i = 0; i < nq; i++) {
    const t = performance.now();
    const got = dense.search(qv.subarray(i * dim, (i + 1) * dim), 10).map((h) => h.num);
    lat.push(performance.now() - t);
    const gt = truth.subarray(i * tk, i * tk + 10);
    const gt5 = new Set(gt.subarray(0, 5));
    const gt10 = new Set(gt);
    for (const g of got) if (gt10.has(g)) hit10++;
    for (const g of got.slice(0, 5)) if (gt5.has(g)) hit5++;
  }
  const secs = (performance.now() - start) / 1000;
  const s = summarize(lat);
  // batches of 100 query vectors through searchMany, as a /retrieve batch is served (graph walked on every core)
  let bHit5 = 0;
  const bStart = performance.now();
  for (let i = 0; i < nq; i += 100) {
    const batch = Array.from({ length: Math.min(100, nq - i) }, (_, j) =>
      qv.subarray((i + j) * dim, (i + j + 1) * dim),
    );
    dense.searchMany(batch, 10).forEach((hits, j) => {
      const gt5 = new Set(truth.subarray((i + j) * tk, (i + j) * tk + 5));
      for (const h of hits.slice(0, 5)) if (gt5.has(h.num)) bHit5++;
    });
  }
  const bSecs = (performance.now() - bStart) / 1000;
  recall.push({
    efSearch: ef,
    openMs,
    recall10: hit10 / (nq * 10),
    recall5: hit5 / (nq * 5),
    p50ms: s.p50,
    p99ms: s.p99,
    qps: nq / secs,
    batch100Recall5: bHit5 / (nq * 5),
    batch100Qps: nq / bSecs,
  });
  if (ef === hybridEf) {
    // BM25 and hybrid with the real questions; query vectors come from the generated set
    const r = benchRetriever(c, precomputedEncoder(texts, qv, dim), 10);
    for (const mode of ['bm25', 'hybrid'] as const) {
      const l: number[] = [];
      for (const t of texts.slice(0, 100)) await r.search({ query: t, mode, topK: 10 }); // warm
      for (const t of texts) {
        const t0q = performance.now();
        await r.search({ query: t, mode, topK: 10 });
        l.push(performance.now() - t0q);
      }
      const ss = summarize(l);
      out[`${mode}P50ms`] = ss.p50;
      out[`${mode}P99ms`] = ss.p99;
    }
  }
  out['rssAfterMiB'] = rssMiB();
  c.close();
}
out['dense'] = recall;
process.stdout.write(`${JSON.stringify(out)}\n`);

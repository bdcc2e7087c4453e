/**
 * Where a hybrid query's time goes on a large index (encoder excluded): the
 * BM25 arm, the HNSW walk, the re-scoring of its candidates, and the whole
 * hybrid search, each timed alone over the same questions. Run on an index
 * that `bench/scale.ts` built.
 *
 *   npm run build && node dist/bench/hybrid-parts.js --size 2000000 [--queries 300] [--ef 768]
 */
import { join } from 'node:path';
import { arg, BENCH_DATA, printTable, sizeLabel, summarize, writeResult } from './lib/common.js';
import { loadRealQuestions } from './lib/queries.js';
import { benchRetriever, openBenchCorpus, precomputedEncoder } from './lib/retriever.js';
import { readVectors } from './lib/vectors.js';

const n = Number(arg('size', '2000000'));
const nq = Number(arg('queries', '300'));
const ef = arg('ef');
const bm25Threads = Number(arg('bm25-threads', '1'));
const dim = 768;
const dir = join(BENCH_DATA, 'scale');
const name = `scale${sizeLabel(n)}`;
const qv = readVectors(join(dir, 'q1000.f32'), dim);
const texts = loadRealQuestions().slice(0, nq);
const vec = (i: number): Float32Array => qv.slice(i * dim, (i + 1) * dim);

const corpus = openBenchCorpus(join(dir, 'indexes'), name, {
  ...(ef ? { ef: Number(ef) } : {}),
  bm25Threads,
});
const dense = corpus.dense!;
const ann = (dense as unknown as { ann: { search: (q: Float32Array, k: number) => { nums: number[] } } }).ann;
const retriever = benchRetriever(corpus, precomputedEncoder(texts, qv, dim), 10);

const pool = corpus.bm25Pool;
const parts: Record<string, (i: number) => unknown> = {
  'BM25 arm (top 100)': (i) => corpus.bm25.search(texts[i] as string, 100),
  ...(pool ? { 'BM25 arm split with a thread': (i: number) => pool.search(texts[i] as string, 100) } : {}),
  'HNSW walk (400 candidates)': (i) => ann.search(vec(i), 400),
  'dense arm (walk + re-score 400 → 100)': (i) => dense.search(vec(i), 100),
};
for (let i = 0; i < Math.min(50, nq); i++) for (const f of Object.values(parts)) await f(i); // warm
const rows: Array<Record<string, string | number>> = [];
for (const [part, f] of Object.entries(parts)) {
  const lat: number[] = [];
  for (let i = 0; i < nq; i++) {
    const t = performance.now();
    await f(i);
    lat.push(performance.now() - t);
  }
  const s = summarize(lat);
  rows.push({ part, 'p50 ms': s.p50, 'mean ms': s.mean, 'p99 ms': s.p99 });
}
const lat: number[] = [];
for (let i = 0; i < nq; i++) {
  const t = performance.now();
  await retriever.search({ query: texts[i] as string, mode: 'hybrid', topK: 10 });
  lat.push(performance.now() - t);
}
const s = summarize(lat);
rows.push({ part: `hybrid search (BM25 threads ${bm25Threads})`, 'p50 ms': s.p50, 'mean ms': s.mean, 'p99 ms': s.p99 });
printTable(`Hybrid query parts, ${name}, ${nq} questions`, rows);
writeResult(`hybrid-parts-${sizeLabel(n)}`, { n, nq, ef: ef ?? 'manifest', bm25Threads, rows });
corpus.close();

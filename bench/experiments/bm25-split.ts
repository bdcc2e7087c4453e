/**
 * The BM25 arm split across threads: one inline search of the whole chunk
 * range against `Bm25Pool` with each thread count in --threads (the main
 * thread and T threads each score an equal range), over the same real
 * questions, one at a time, top-100 as the hybrid arm asks. The first pass of
 * each pool is reported apart: a thread learns where its range starts and
 * ends in each long list on first use. Every pool answer is checked equal to
 * the inline one. Run on a text + BM25 index (`build-index --no-dense` is
 * enough).
 *
 *   npm run build && node dist/bench/experiments/bm25-split.js --index-dir DIR --name NAME [--threads 1] [--queries 1000] [--rounds 3]
 */
import { join } from 'node:path';
import { Bm25Pool } from '../../src/index/bm25/bm25-pool.js';
import { INDEX_FILES } from '../../src/index/layout.js';
import { bm25Files, openCorpus } from '../../src/search/open-corpus.js';
import type { ScoredHit } from '../../src/core/top-k.js';
import { arg, printTable, summarize, writeResult } from '../lib/common.js';
import { loadRealQuestions } from '../lib/queries.js';

const indexDir = arg('index-dir') as string;
const name = arg('name') as string;
const nq = Number(arg('queries', '1000'));
const rounds = Number(arg('rounds', '3'));
const threadCounts = (arg('threads', '1') as string).split(',').map(Number);
const k = 100;

const corpus = openCorpus(indexDir, name, { verify: 'sizes' });
const m = corpus.manifest;
const init = { ...bm25Files(corpus.dir, m), storePath: join(corpus.dir, INDEX_FILES.store) };
const texts = loadRealQuestions().slice(0, nq);
const pools = threadCounts.map((t) => ({ threads: t, pool: new Bm25Pool(init, t, corpus.bm25) }));

async function pass(search: (q: string) => ScoredHit[] | Promise<ScoredHit[]>): Promise<number[]> {
  const lat: number[] = [];
  for (const q of texts) {
    const t = performance.now();
    await search(q);
    lat.push(performance.now() - t);
  }
  return lat;
}

for (const q of texts.slice(0, 50)) corpus.bm25.search(q, k); // page cache and JIT
const rows: Array<Record<string, string | number>> = [];
const row = (arm: string, lat: number[]): void => {
  const s = summarize(lat);
  rows.push({ arm, 'p50 ms': s.p50, 'mean ms': s.mean, 'p99 ms': s.p99 });
};
for (const { threads, pool } of pools) {
  let differing = 0;
  const lat: number[] = [];
  for (const q of texts) {
    const t = performance.now();
    const got = await pool.search(q, k);
    lat.push(performance.now() - t);
    if (JSON.stringify(got) !== JSON.stringify(corpus.bm25.search(q, k))) differing++;
  }
  if (differing > 0) throw new Error(`${differing} of ${texts.length} split searches differ from the inline search`);
  row(`first pass, ${threads} thread(s)`, lat);
}
const arms: Array<{ arm: string; search: (q: string) => ScoredHit[] | Promise<ScoredHit[]> }> = [
  { arm: 'inline, whole range', search: (q) => corpus.bm25.search(q, k) },
  ...pools.map(({ threads, pool }) => ({
    arm: `split, ${threads} thread(s)`,
    search: (q: string) => pool.search(q, k),
  })),
];
const byArm = new Map<string, number[]>(arms.map((a) => [a.arm, []]));
// the arms alternate round by round, so the machine's drift falls on all of them
for (let r = 0; r < rounds; r++) for (const a of arms) byArm.get(a.arm)?.push(...(await pass(a.search)));
for (const [arm, lat] of byArm) row(arm, lat);

printTable(`BM25 top-${k}, ${texts.length} real questions × ${rounds} rounds, ${m.corpus.chunks} chunks`, rows);
writeResult('bm25-split', { name, chunks: m.corpus.chunks, queries: texts.length, rounds, rows });
await Promise.all(pools.map((p) => p.pool.close()));
corpus.close();

/**
 * Child process for bm25-scale: opens one index, replays the real question
 * load, prints {openMs, rssAfterOpenMiB, p50, p99, qps, rssAfterMiB} as JSON.
 */
import { openCorpus } from '../src/search/open-corpus.js';
import { arg, rssMiB, summarize } from './lib/common.js';
import { loadRealQuestions } from './lib/queries.js';

const t0 = performance.now();
const corpus = openCorpus(arg('index-dir') as string, arg('name') as string);
const openMs = performance.now() - t0;
const rssAfterOpenMiB = rssMiB();
const depth = Number(arg('k', '100'));
const queries = loadRealQuestions();
for (const q of queries.slice(0, 300)) corpus.bm25.search(q, depth); // warm the page cache and JIT
const lat: number[] = [];
const start = performance.now();
for (const q of queries) {
  const t = performance.now();
  corpus.bm25.search(q, depth);
  lat.push(performance.now() - t);
}
const secs = (performance.now() - start) / 1000;
const s = summarize(lat);
process.stdout.write(
  `${JSON.stringify({ openMs, rssAfterOpenMiB, p50: s.p50, p99: s.p99, qps: lat.length / secs, queries: lat.length, rssAfterMiB: rssMiB() })}\n`,
);

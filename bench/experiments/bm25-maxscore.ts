/**
 * The dynamic-pruning experiment behind DESIGN.md's "tried and not adopted":
 * windowed MaxScore with block tables derived from the unchanged postings
 * (bench/lib/maxscore.ts) against the product's exhaustive term-at-a-time
 * scorer, on one built index, with the real questions, in the same run.
 * Every MaxScore result is checked to equal the product's, hit for hit.
 *
 *   npm run build && node dist/bench/experiments/bm25-maxscore.js \
 *     --index-dir bench/data/scale/indexes --name scale1m --queries 300
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { idf, lengthNormTable } from '../../src/index/bm25/scoring.js';
import { INDEX_FILES } from '../../src/index/layout.js';
import { openCorpus } from '../../src/search/open-corpus.js';
import { TopK } from '../../src/core/top-k.js';
import { arg, printTable, writeResult } from '../lib/common.js';
import {
  BlockCache,
  MaxScoreScratch,
  TermCursor,
  buildBlockTable,
  maxScoreSearch,
  shouldCache,
} from '../lib/maxscore.js';
import { loadRealQuestions } from '../lib/queries.js';

const indexDir = arg('index-dir', 'bench/data/scale/indexes') as string;
const name = arg('name', 'scale1m') as string;
const nq = Number(arg('queries', '300'));
// the dense arm is not needed: a stand-in that is never searched
const c = openCorpus(indexDir, name, {
  openDense: () => ({ encoderId: 'unused', search: () => [], searchMany: () => [], close: () => undefined }),
  verify: 'sizes',
});
const dir = join(indexDir, name);
const postings = readFileSync(join(dir, INDEX_FILES.postings));
const norms = readFileSync(join(dir, INDEX_FILES.norms));
const m = c.manifest.bm25;
const normTable = lengthNormTable({ k1: m.k1, b: m.b }, m.total_tokens / m.doc_count);
const cache = new BlockCache(64 * 2 ** 20);
const scratch = new MaxScoreScratch();

function maxScore(query: string, k: number): Array<{ num: number; score: number }> {
  const cursors: TermCursor[] = [];
  for (const [term, count] of c.bm25.analyzeQuery(query)) {
    const e = c.store.lookupTerm(term);
    if (!e) continue;
    const bytes = postings.subarray(e.offset, e.offset + e.nbytes);
    let blocks = shouldCache(e.df) ? cache.get(term) : undefined;
    if (!blocks) {
      blocks = buildBlockTable(bytes, e.nbytes, e.df, norms, normTable);
      if (shouldCache(e.df)) cache.set(term, blocks);
    }
    cursors.push(new TermCursor(cursors.length, count * idf(e.df, m.doc_count), bytes, e.nbytes, blocks));
  }
  const top = new TopK(k);
  maxScoreSearch(cursors, top, norms, normTable, undefined, scratch);
  return top.result();
}

const questions = loadRealQuestions().slice(0, nq);
const firstTerms = questions.map((q) => [...c.bm25.analyzeQuery(q).keys()].slice(0, 3).join(' '));
const rows: Array<Record<string, string | number>> = [];
for (const [label, qs] of [
  ['full questions', questions],
  ['first 3 terms', firstTerms],
] as const) {
  for (const k of [10, 100]) {
    for (const q of qs.slice(0, 50)) {
      c.bm25.search(q, k); // warm the page cache and the block tables
      maxScore(q, k);
    }
    let tE = 0;
    let tM = 0;
    let differ = 0;
    for (const q of qs) {
      let t = performance.now();
      const a = c.bm25.search(q, k);
      tE += performance.now() - t;
      t = performance.now();
      const b = maxScore(q, k);
      tM += performance.now() - t;
      if (JSON.stringify(a) !== JSON.stringify(b)) differ++;
    }
    rows.push({
      query: label,
      k,
      'exhaustive ms/query': Math.round((tE / qs.length) * 100) / 100,
      'MaxScore ms/query': Math.round((tM / qs.length) * 100) / 100,
      'results differing': differ,
    });
  }
}
c.close();
printTable(`BM25 exhaustive vs windowed MaxScore, ${name}, ${nq} real questions`, rows);
writeResult('bm25-maxscore', { name, queries: nq, rows });

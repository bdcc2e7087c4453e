/**
 * BM25 on real Wikipedia text (../shared/data/enwiki-1m, 1.23M passages, or
 * text scaled from it by scale-corpus.ts) with real questions and agent-style
 * queries, against Lucene (pyserini), bm25s and tantivy from PyPI in the same
 * run: one query at a time, top-10 and top-100; ours also exhaustively and
 * split over two threads.
 *
 *   xz -dc ../shared/data/enwiki-1m/passages.jsonl.xz > bench/data/enwiki-1m.jsonl
 *   npm run bench -- bm25-real [--limit 1000]
 *     [--corpus FILE --name INDEX --result NAME --label TEXT]
 *     [--engines lucene,bm25s,tantivy | none] [--exhaustive-limit N]
 *
 * Queries: the real questions of every data set in ../shared (2Wiki, the
 * MultiHop-RAG surrogate, GraphRAG-Bench medical and novel), interleaved, and
 * from each its agent-style form: the question's content words in order (a
 * stop list of function and question words removed), at most 6 of them, at
 * least 2. Peers: bench/peers/bm25_real_peer.py in bench/.venv. Overlap@10 is the
 * share of our top-10 passage ids that a peer's top-10 also holds.
 * Writes bench/results/<result>.json (bm25-real.json by default).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { percentile } from '../../src/util/percentile.js';
import { arg, BENCH_DATA, ROOT, SHARED, writeResult } from '../lib/common.js';
import { pythonFor } from '../../scripts/models/real-models.js';
import { openBenchCorpus } from '../lib/retriever.js';
import type { ScoredHit } from '../../src/core/top-k.js';
import { Bm25Pool } from '../../src/index/bm25/bm25-pool.js';
import { Bm25Searcher } from '../../src/index/bm25/bm25-searcher.js';
import { INDEX_FILES } from '../../src/index/layout.js';
import { bm25Files } from '../../src/search/open-corpus.js';
import { createEnglishAnalyzer } from '../../src/text/analyzer.js';

const limit = Number(arg('limit', '1000'));
const corpusPath = arg('corpus', join(BENCH_DATA, 'enwiki-1m.jsonl')) as string;
const indexName = arg('name', 'enwiki1m') as string;
const resultName = arg('result', 'bm25-real') as string;
const engines = arg('engines', 'lucene,bm25s,tantivy') as string;
const exhaustiveLimit = Number(arg('exhaustive-limit', String(limit)));
const corpusLabel = arg('label', 'enwiki-1m (1,232,684 real Wikipedia passages)');
if (!existsSync(corpusPath)) {
  throw new Error(`${corpusPath} is missing: xz -dc ../shared/data/enwiki-1m/passages.jsonl.xz > ${corpusPath}`);
}
const log = (line: string): void => void process.stderr.write(`${line}\n`);

/** Function and question words an agent leaves out of a search query. */
const AGENT_STOP = new Set(
  (
    'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with ' +
    'who whom whose what which when where why how did does do was were has have had is are been being can could would should ' +
    'from about between both either any each than also same other its his her him he she them we you your our i me my ' +
    'according mentioned reported article film movie person individual one many much more most'
  ).split(' '),
);

function agentQuery(q: string): string | undefined {
  const words = (q.match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? []).filter((w) => !AGENT_STOP.has(w.toLowerCase()));
  return words.length >= 2 ? words.slice(0, 6).join(' ') : undefined;
}

function questions(): string[] {
  const lines = (p: string): Array<Record<string, unknown>> =>
    readFileSync(p, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const json = (p: string): Array<Record<string, unknown>> =>
    JSON.parse(readFileSync(p, 'utf8')) as Array<Record<string, unknown>>;
  const sets = [
    lines(join(SHARED, 'data/2wiki-200/queries.jsonl')).map((r) => String(r['question'])),
    json(join(SHARED, 'data/multihop-rag/MultiHopRAG.surrogate.json')).map((r) => String(r['query'])),
    json(join(SHARED, 'data/graphrag-bench/medical_questions.json')).map((r) => String(r['question'])),
    json(join(SHARED, 'data/graphrag-bench/novel_questions.json')).map((r) => String(r['question'])),
  ];
  const out: string[] = [];
  for (let i = 0; out.length < limit && i < 10_000; i++)
    for (const s of sets) if (s[i] && out.length < limit) out.push(s[i] as string);
  return out;
}

const full = questions();
const agent = full.map(agentQuery).filter((q): q is string => q !== undefined);

// our index, built once by the real CLI
const indexDir = join(BENCH_DATA, 'real-bm25-indexes');
let buildSeconds: number | null = null;
if (!existsSync(join(indexDir, indexName, 'manifest.json'))) {
  const t0 = performance.now();
  execFileSync(
    'node',
    [
      join(ROOT, 'bin/build-index.js'),
      '--name',
      indexName,
      '--input',
      corpusPath,
      '--format',
      'wiki18',
      '--index-dir',
      indexDir,
      '--no-dense',
      '--no-progress',
    ],
    { stdio: ['ignore', 2, 2] },
  );
  buildSeconds = (performance.now() - t0) / 1000;
}
const corpus = openBenchCorpus(indexDir, indexName);
const rssReadyMiB = process.memoryUsage().rss / 2 ** 20;
if (!corpus.bm25.pruning) throw new Error(`${indexDir}/${indexName} has no block-max file: delete it so it is rebuilt`);
// the same index scored exhaustively (no block-max file), and searched by two threads
const exhaustiveFiles = bm25Files(corpus.dir, corpus.manifest);
delete exhaustiveFiles.blocksPath;
const exhaustive = new Bm25Searcher({
  ...exhaustiveFiles,
  lookupTerm: (t) => corpus.store.lookupTerm(t),
  analyzer: createEnglishAnalyzer(),
});
const pool = new Bm25Pool(
  { ...bm25Files(corpus.dir, corpus.manifest), storePath: join(corpus.dir, INDEX_FILES.store) },
  1,
  corpus.bm25,
);
// the BM25 files (postings, one byte per chunk, block maxes); the term dictionary sits in the SQLite store beside the text
const files = corpus.manifest.files;
const indexBytes = ['bm25.postings', 'bm25.norms', 'bm25.blocks'].reduce((s, f) => s + (files[f]?.bytes ?? 0), 0);
const storeBytes = files['chunks.sqlite']?.bytes ?? 0;

const results: Record<string, unknown>[] = [];
for (const [setName, qs] of [
  ['agent-style', agent],
  ['questions', full],
] as const) {
  const ours: Record<string, Stats> = {};
  const oursExhaustive: Record<string, Stats> = {};
  const oursTwoThreads: Record<string, Stats> = {};
  let top10: string[][] = [];
  let identical = true;
  for (const k of [10, 100]) {
    const pruned = await timed(qs, (q) => corpus.bm25.search(q, k));
    // exhaustive scoring is linear in the corpus: at 21M a subset shows its speed and the identity
    const full = await timed(qs.slice(0, exhaustiveLimit), (q) => exhaustive.search(q, k));
    const two = await timed(qs, (q) => pool.search(q, k));
    ours[k] = pruned.stats;
    oursExhaustive[k] = full.stats;
    oursTwoThreads[k] = two.stats;
    pruned.hits.forEach((h, i) => {
      const want = JSON.stringify(h);
      if ((i < full.hits.length && want !== JSON.stringify(full.hits[i])) || want !== JSON.stringify(two.hits[i]))
        identical = false;
    });
    if (k === 10) top10 = pruned.hits.map((h) => h.map((x) => corpus.store.getChunkId(x.num) ?? ''));
  }
  const qFile = join(BENCH_DATA, `bm25-real-${setName}.json`);
  writeFileSync(qFile, JSON.stringify(qs));
  const outFile = join(BENCH_DATA, `bm25-real-peers-${indexName}-${setName}.json`);
  if (engines === 'none') writeFileSync(outFile, '{}');
  else
    execFileSync(
      pythonFor({ log }),
      [
        join(ROOT, 'bench/peers/bm25_real_peer.py'),
        '--corpus',
        corpusPath,
        '--queries',
        qFile,
        '--out',
        outFile,
        '--index-dir',
        join(BENCH_DATA, 'peer-bm25', indexName),
        '--engines',
        engines,
      ],
      { stdio: ['ignore', 2, 2] },
    );
  const peers = JSON.parse(readFileSync(outFile, 'utf8')) as Record<
    string,
    {
      build_s: number;
      index_bytes: number;
      by_k: Record<string, { p50_ms: number; p99_ms: number; qps: number }>;
      top10: string[][];
    }
  >;
  // nDCG@10 of a peer's list, our top-10 the graded truth (our rank r of 10 is worth 10 − r)
  const ndcg = (theirs: string[][]): number => {
    let sum = 0;
    let counted = 0;
    top10.forEach((mine, i) => {
      if (mine.length === 0) return;
      const gain = new Map(mine.map((id, r) => [id, 10 - r]));
      const dcg = (list: string[]): number =>
        list.slice(0, 10).reduce((s, id, r) => s + (2 ** (gain.get(id) ?? 0) - 1) / Math.log2(r + 2), 0);
      sum += dcg(theirs[i] ?? []) / dcg(mine);
      counted++;
    });
    return counted > 0 ? sum / counted : 1;
  };
  const overlap = (theirs: string[][]): number => {
    let sum = 0;
    top10.forEach((mine, i) => {
      const other = new Set(theirs[i] ?? []);
      sum += mine.length === 0 ? 1 : mine.filter((id) => other.has(id)).length / mine.length;
    });
    return sum / top10.length;
  };
  results.push({
    queries: setName,
    count: qs.length,
    meanWords: qs.reduce((s, q) => s + q.split(/\s+/).length, 0) / qs.length,
    ours: {
      by_k: ours,
      exhaustive_by_k: oursExhaustive,
      two_threads_by_k: oursTwoThreads,
      identical_to_exhaustive: identical,
      exhaustive_queries: Math.min(exhaustiveLimit, qs.length),
      index_bytes: indexBytes,
      store_bytes: storeBytes,
      build_s: buildSeconds,
      rss_ready_mib: rssReadyMiB,
    },
    peers: Object.fromEntries(
      Object.entries(peers).map(([name, p]) => [
        name,
        {
          build_s: p.build_s,
          index_bytes: p.index_bytes,
          by_k: p.by_k,
          overlap10: overlap(p.top10),
          ndcg10: ndcg(p.top10),
        },
      ]),
    ),
  });
  log(
    `${setName}: ours top-10 p50 ${ours[10]?.p50_ms.toFixed(2)} ms; ${Object.entries(peers)
      .map(([n, p]) => `${n} ${p.by_k['10']?.p50_ms.toFixed(2)} ms, overlap@10 ${overlap(p.top10).toFixed(3)}`)
      .join('; ')}`,
  );
}
await pool.close();
exhaustive.close();
corpus.close();
writeResult(resultName, { corpus: corpusLabel, passages: corpus.manifest.corpus.chunks, threads: 1, results });

interface Stats {
  p50_ms: number;
  p99_ms: number;
  qps: number;
}

/** One query at a time, after a warm-up pass over the first 300 (page cache and JIT). */
async function timed(
  qs: readonly string[],
  search: (q: string) => ScoredHit[] | Promise<ScoredHit[]>,
): Promise<{ stats: Stats; hits: ScoredHit[][] }> {
  for (const q of qs.slice(0, 300)) await search(q);
  const lat: number[] = [];
  const hits: ScoredHit[][] = [];
  const t0 = performance.now();
  for (const q of qs) {
    const t = performance.now();
    hits.push(await search(q));
    lat.push(performance.now() - t);
  }
  const wall = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  return { stats: { p50_ms: percentile(lat, 50), p99_ms: percentile(lat, 99), qps: qs.length / wall }, hits };
}

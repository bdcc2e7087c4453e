/**
 * BM25 on real Wikipedia text (../shared/data/enwiki-1m, 1.23M passages) with
 * real questions and agent-style queries, against bm25s and tantivy from PyPI
 * in the same run: one thread, one query at a time, top-10 and top-100.
 *
 *   xz -dc ../shared/data/enwiki-1m/passages.jsonl.xz > bench/data/enwiki-1m.jsonl
 *   npm run build:bench && node dist/bench/bm25-real.js [--limit 1000]
 *
 * Queries: the real questions of every data set in ../shared (2Wiki, the
 * MultiHop-RAG surrogate, GraphRAG-Bench medical and novel), interleaved, and
 * from each its agent-style form: the question's content words in order (a
 * stop list of function and question words removed), at most 6 of them, at
 * least 2. Peers: bench/bm25_real_peer.py in bench/.venv. Overlap@10 is the
 * share of our top-10 passage ids that a peer's top-10 also holds.
 * Writes bench/results/bm25-real.json.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { percentile } from '../src/util/percentile.js';
import { arg, BENCH_DATA, ROOT, SHARED, writeResult } from './lib/common.js';
import { pythonFor } from './lib/real-models.js';
import { openBenchCorpus } from './lib/retriever.js';

const limit = Number(arg('limit', '1000'));
const corpusPath = join(BENCH_DATA, 'enwiki-1m.jsonl');
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
if (!existsSync(join(indexDir, 'enwiki1m', 'manifest.json'))) {
  const t0 = performance.now();
  execFileSync(
    'node',
    [
      join(ROOT, 'bin/build-index.js'),
      '--name',
      'enwiki1m',
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
const corpus = openBenchCorpus(indexDir, 'enwiki1m');
// the BM25 files (postings and one byte per chunk); the term dictionary sits in the SQLite store beside the text
const files = corpus.manifest.files;
const indexBytes = (files['bm25.postings']?.bytes ?? 0) + (files['bm25.norms']?.bytes ?? 0);
const storeBytes = files['chunks.sqlite']?.bytes ?? 0;

const results: Record<string, unknown>[] = [];
for (const [setName, qs] of [
  ['agent-style', agent],
  ['questions', full],
] as const) {
  const ours: Record<string, { p50_ms: number; p99_ms: number; qps: number }> = {};
  let top10: string[][] = [];
  for (const k of [10, 100]) {
    for (const q of qs.slice(0, 50)) corpus.bm25.search(q, k); // warm the page cache and the JIT
    const lat: number[] = [];
    const hits: number[][] = [];
    const t0 = performance.now();
    for (const q of qs) {
      const t = performance.now();
      const h = corpus.bm25.search(q, k);
      lat.push(performance.now() - t);
      if (k === 10) hits.push(h.map((x) => x.num));
    }
    const wall = (performance.now() - t0) / 1000;
    lat.sort((a, b) => a - b);
    ours[k] = { p50_ms: percentile(lat, 50), p99_ms: percentile(lat, 99), qps: qs.length / wall };
    if (k === 10) top10 = hits.map((h) => h.map((n) => corpus.store.getChunkId(n) ?? ''));
  }
  const qFile = join(BENCH_DATA, `bm25-real-${setName}.json`);
  writeFileSync(qFile, JSON.stringify(qs));
  const outFile = join(BENCH_DATA, `bm25-real-peers-${setName}.json`);
  execFileSync(
    pythonFor({ log }),
    [
      join(ROOT, 'bench/bm25_real_peer.py'),
      '--corpus',
      corpusPath,
      '--queries',
      qFile,
      '--out',
      outFile,
      '--index-dir',
      join(BENCH_DATA, 'peer-bm25'),
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
    ours: { by_k: ours, index_bytes: indexBytes, store_bytes: storeBytes, build_s: buildSeconds },
    peers: Object.fromEntries(
      Object.entries(peers).map(([name, p]) => [
        name,
        { build_s: p.build_s, index_bytes: p.index_bytes, by_k: p.by_k, overlap10: overlap(p.top10) },
      ]),
    ),
  });
  log(
    `${setName}: ours top-10 p50 ${ours[10]?.p50_ms.toFixed(2)} ms; ${Object.entries(peers)
      .map(([n, p]) => `${n} ${p.by_k['10']?.p50_ms.toFixed(2)} ms, overlap@10 ${overlap(p.top10).toFixed(3)}`)
      .join('; ')}`,
  );
}
corpus.close();
writeResult('bm25-real', { corpus: 'enwiki-1m (1,232,684 real Wikipedia passages)', threads: 1, results });

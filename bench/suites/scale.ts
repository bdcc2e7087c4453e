/**
 * wiki-18 scale on one 2-core machine, measured on generated data at 1M and
 * 2M passages (real-looking text, see gen-corpus.ts; clustered 768-d vectors
 * imported as the published e5 index would be), extrapolated to 21M:
 * build throughput per phase, start-up to ready, resident memory, dense
 * recall against exact search, BM25/hybrid latency (encoder excluded), and
 * faiss IVF1024,PQ96 (the DeepSearch-RL setting) on the same vectors.
 *
 *   npm run bench -- scale [--sizes 1000000,2000000] [--ann-m 16] [--faiss false]
 */
import { createReadStream, createWriteStream, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { exactSearch, MetricKind } from 'usearch';
import { defaultExpansionSearch } from '../../src/index/dense/ann.js';
import { arg, BENCH_DATA, printTable, ROOT, sizeLabel, writeResult } from '../lib/common.js';
import { ensureGenCorpus, buildWiki18Index, runProbe, textPhaseSeconds } from '../lib/child.js';
import { rssOf, startServer } from '../lib/server.js';
import { faissPython, runFaiss } from '../lib/faiss.js';
import { ensureVectors, fbinHeaderBytes, readVectors } from '../lib/vectors.js';

const sizes = (arg('sizes', '1000000,2000000') as string).split(',').map(Number);
const model = arg('model', join(BENCH_DATA, 'bert-base-random')) as string;
// the graph's M (default: build-index's by size); `--ann-m 16` below 1M gives the recall curve of
// the graph corpora above 1M get
const annM = arg('ann-m');
const defaultEf = (n: number): number => defaultExpansionSearch(n, annM ? Number(annM) : undefined);
const dim = 768;
const dir = join(BENCH_DATA, 'scale');
const indexDir = join(dir, 'indexes');
mkdirSync(dir, { recursive: true });

async function corpusOf(n: number): Promise<string> {
  const path = join(BENCH_DATA, `gen-${sizeLabel(n)}.jsonl`);
  if (existsSync(path)) return path;
  const big = ensureGenCorpus(2_000_000);
  const ws = createWriteStream(path);
  let i = 0;
  for await (const line of createInterface({ input: createReadStream(big) })) {
    if (i++ >= n) break;
    if (!ws.write(`${line}\n`)) await new Promise<void>((r) => ws.once('drain', () => r()));
  }
  await new Promise<void>((r) => ws.end(() => r()));
  return path;
}

/** "label [...] 100.0% … in 12.3s" lines of the build's progress output → seconds per phase. */
function phaseSeconds(stderr: string, label: string): number {
  const lines = stderr.split('\n').filter((l) => l.startsWith(label) && / in [\d.]+(s|m\d+s)/.test(l));
  const m = /in (?:(\d+)m)?([\d.]+)s/.exec(lines[lines.length - 1] ?? '');
  return m ? Number(m[1] ?? 0) * 60 + Number(m[2]) : NaN;
}

const queriesPath = join(dir, 'q1000.f32');
ensureVectors(queriesPath, 'clustered', 1000, dim, 22);
const rows: Array<Record<string, string | number>> = [];
const details: Record<string, unknown> = {};
for (const n of sizes) {
  const name = `scale${sizeLabel(n)}`;
  const corpus = await corpusOf(n);
  const vectors = join(dir, `vec-${sizeLabel(n)}.fbin`);
  ensureVectors(vectors, 'clustered', n, dim, 21, true);
  const truthPath = join(dir, `truth-${sizeLabel(n)}.i32`);
  if (!existsSync(truthPath)) {
    writeFileSync(truthPath, exactTop10(vectors, readVectors(queriesPath, dim), n));
  }
  const b = buildWiki18Index(name, corpus, indexDir, [
    '--model-path',
    model,
    '--vectors',
    vectors,
    '--vectors-dtype',
    'f16',
    '--ann-quantization',
    'i8',
    ...(annM ? ['--ann-m', annM] : []),
  ]);
  const ingestS = phaseSeconds(b.stderr, `ingest ${name}`);
  const textS = textPhaseSeconds(b.stderr);
  const importS = phaseSeconds(b.stderr, 'import vectors');
  const hnswS = phaseSeconds(b.stderr, 'HNSW graph');
  const live = join(indexDir, name);
  const bytes = (f: string): number => statSync(join(live, f)).size;
  const srv = await startServer([
    '--corpus',
    name,
    '--index-dir',
    indexDir,
    '--model-path',
    model,
    '--verify',
    'sample',
  ]);
  const rssReady = rssOf(srv.pid);
  await srv.stop();
  const probe = runProbe(join(ROOT, 'dist/bench/lib/scale-probe.js'), [
    '--index-dir',
    indexDir,
    '--name',
    name,
    '--queries',
    queriesPath,
    '--truth',
    truthPath,
    '--efs',
    '32,64,128,384,768',
    '--hybrid-ef', // BM25 and hybrid are timed at the default build-index stores for this size
    String(defaultEf(n)),
  ]);
  details[name] = { build: b, probe };
  const dense = (probe['dense'] as Array<Record<string, number>>).find((d) => d['efSearch'] === defaultEf(n)) ?? {};
  rows.push({
    passages: n,
    'build s': b.wallS,
    'text+BM25 passages/s': Math.round(n / textS),
    'read+invert passages/s': Math.round(n / ingestS),
    'vector import /s': Math.round(n / importS),
    'HNSW build s': hnswS,
    'build peak RSS MiB': Math.round(b.maxRssMiB ?? 0),
    'HNSW i8 MiB': Math.round(bytes('dense.usearch') / 2 ** 20),
    'vectors f16 MiB': Math.round(bytes('vectors.bin') / 2 ** 20),
    'BM25 MiB': Math.round((bytes('bm25.postings') + bytes('bm25.norms')) / 2 ** 20),
    'SQLite MiB': Math.round(bytes('chunks.sqlite') / 2 ** 20),
    'ready s': srv.readyMs / 1000,
    'RSS at ready MiB': Math.round(rssReady),
    'probe RSS MiB': Math.round(probe['rssAfterMiB'] as number),
    'default ef': defaultEf(n),
    'dense R@10': dense['recall10'] ?? NaN,
    'dense p50 ms': dense['p50ms'] ?? NaN,
    'BM25 p50 ms': probe['bm25P50ms'] as number,
    'hybrid p50 ms': probe['hybridP50ms'] as number,
    'hybrid p99 ms': probe['hybridP99ms'] as number,
  });
  process.stderr.write(`${JSON.stringify(rows[rows.length - 1])}\n${JSON.stringify(probe['dense'])}\n`);
}

// faiss IVF1024,PQ96 on the largest size, batch 100 (DeepSearch-RL's setting)
const n = sizes[sizes.length - 1] as number;
const vectors = join(dir, `vec-${sizeLabel(n)}.fbin`);
const ivf = join(dir, `ivfpq-${sizeLabel(n)}.faiss`);
const truthPath = join(dir, `truth-${sizeLabel(n)}.i32`);
// --faiss false skips it (bench/faiss-cpu.ts sets faiss HNSW32 and IVF-PQ with refine beside ours)
let faiss: { build: Record<string, unknown>; serve: { rows?: unknown[] } } | null = null;
if (arg('faiss', 'true') !== 'false') {
  const py = faissPython((l) => process.stderr.write(`${l}\n`));
  const files = { vectors, queries: queriesPath, truth: truthPath, index: ivf, dim };
  const run = {
    factory: 'IVF1024,PQ96',
    params: ['nprobe=8', 'nprobe=16', 'nprobe=32', 'nprobe=64'],
    batch: 100,
    threads: 2,
  };
  faiss = { build: runFaiss(py, 'build', files, run).json, serve: runFaiss(py, 'serve', files, run).json };
}
printTable(
  `wiki-18 scale (generated data), i8 HNSW memory-mapped, f16 vectors on disk, efSearch ${sizes.map(defaultEf).join(' / ')} (the build default per size)`,
  rows,
);
if (faiss) {
  printTable(
    `faiss IVF1024,PQ96 on the same ${sizeLabel(n)} vectors, batch 100, 2 threads`,
    (faiss.serve.rows ?? []) as Array<Record<string, number>>,
  );
}
writeResult('scale', { sizes, rows, faiss, details });

/** Exact top-10 by inner product, 250k rows at a time (2M × 768 float32 would not fit one typed array). */
function exactTop10(path: string, queries: Float32Array, n: number): Int32Array {
  const nq = queries.length / dim;
  const best: Array<Array<[number, number]>> = Array.from({ length: nq }, () => []);
  const block = 250_000;
  for (let from = 0; from < n; from += block) {
    const x = readVectors(path, dim, from, Math.min(block, n - from), fbinHeaderBytes(path));
    const r = exactSearch(x, queries, dim, 10, MetricKind.IP, 2);
    for (let q = 0; q < nq; q++) {
      const list = best[q] as Array<[number, number]>;
      for (let j = 0; j < 10; j++) list.push([from + Number(r.keys[q * 10 + j]), r.distances[q * 10 + j] as number]);
      list.sort((a, b) => a[1] - b[1] || a[0] - b[0]); // usearch's IP distance is 1 − dot: smaller is nearer
      list.length = Math.min(list.length, 10);
    }
  }
  return Int32Array.from(best.flatMap((l) => l.map(([num]) => num)));
}

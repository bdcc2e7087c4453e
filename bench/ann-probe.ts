/**
 * One ANN engine, one phase, in its own process (for honest RSS):
 *   --phase build: index --base, save to --index; prints build seconds.
 *   --phase serve: open --index (mmap where the engine can), run --queries at
 *                  each --efs, compare with --truth; prints recall@10, p50, QPS, RSS.
 * Engines: usearch-i8 | usearch-f16 | usearch-f32 | hnswlib-node, and
 * usearch-i8+rescore: the product's dense path (i8 graph, then exact cosines
 * of 4k candidates from the stored float32 vectors via pread).
 */
import hnswlib from 'hnswlib-node';
import { openSync, readFileSync, readSync, statSync } from 'node:fs';
import { Index, MetricKind, ScalarKind } from 'usearch';
import { TopK } from '../src/core/top-k.js';
import { arg, rssMiB, summarize } from './lib/common.js';
import { fbinHeaderBytes, readVectors } from './lib/vectors.js';

const engine = arg('engine') as string;
const phase = arg('phase') as string;
const dim = Number(arg('dim', '768'));
const m = Number(arg('m', '16'));
const efc = Number(arg('efc', '128'));
const indexPath = arg('index') as string;
const threads = Number(arg('threads', '2'));
// candidates re-scored exactly, as a multiple of k (the product's --rescore-factor)
const rescoreFactor = Number(arg('rescore', '4'));

function usearchIndex(efs: number): Index {
  const q = engine.split('-')[1]?.split('+')[0] as 'i8' | 'f16' | 'f32';
  const kind = { i8: ScalarKind.I8, f16: ScalarKind.F16, f32: ScalarKind.F32 }[q];
  return new Index({
    dimensions: dim,
    metric: MetricKind.Cos,
    quantization: kind,
    connectivity: m,
    expansion_add: efc,
    expansion_search: efs,
    multi: false,
  });
}

/** One float32 row by pread, as the product's VectorReader reads its stored vectors. */
function rowReader(path: string): (num: number) => Float32Array {
  const header = fbinHeaderBytes(path);
  const fd = openSync(path, 'r');
  const row = new Float32Array(dim);
  const bytes = new Uint8Array(row.buffer);
  return (num) => {
    readSync(fd, bytes, 0, bytes.length, header + num * dim * 4);
    return row;
  };
}

function build(): Record<string, number> {
  const basePath = arg('base') as string;
  const header = fbinHeaderBytes(basePath);
  const n = (statSync(basePath).size - header) / (dim * 4);
  const t0 = performance.now();
  if (engine.startsWith('usearch')) {
    const idx = usearchIndex(64);
    const batch = 65_536;
    // read batch by batch: a 2M × 768 float32 base (6 GB) is past what one typed array holds
    for (let i = 0; i < n; i += batch) {
      const c = Math.min(batch, n - i);
      const keys = new BigUint64Array(c);
      for (let j = 0; j < c; j++) keys[j] = BigInt(i + j);
      idx.add(keys, readVectors(basePath, dim, i, c, header), threads);
    }
    const buildS = (performance.now() - t0) / 1000;
    idx.save(indexPath);
    return { buildS, vectors: n, indexBytes: statSync(indexPath).size };
  }
  const base = readVectors(basePath, dim, 0, undefined, header);
  const idx = new hnswlib.HierarchicalNSW('ip', dim);
  idx.initIndex({ maxElements: n, m, efConstruction: efc, randomSeed: 100 });
  for (let i = 0; i < n; i++) idx.addPoint(Array.from(base.subarray(i * dim, (i + 1) * dim)), i);
  const buildS = (performance.now() - t0) / 1000;
  idx.writeIndexSync(indexPath);
  return { buildS, vectors: n, indexBytes: statSync(indexPath).size };
}

function serve(): Record<string, unknown> {
  const queries = readVectors(arg('queries') as string, dim);
  const nq = queries.length / dim;
  const truth = new Int32Array(readFileSync(arg('truth') as string).buffer.slice(0));
  const tk = truth.length / nq; // truth depth per query
  const efs = (arg('efs', '16,32,64,128,256') as string).split(',').map(Number);
  const rows: Array<Record<string, number>> = [];
  let rssFirstPass = 0;
  const t0 = performance.now();
  let search: (q: Float32Array, k: number) => number[];
  let setEf: (ef: number) => void;
  if (engine.startsWith('usearch')) {
    let idx = usearchIndex(efs[0] as number);
    idx.view(indexPath);
    setEf = (ef) => {
      idx = usearchIndex(ef);
      idx.view(indexPath);
    };
    search = (q, k) => Array.from(idx.search(q, k, 1).keys, Number);
    if (engine.endsWith('+rescore')) {
      const row = rowReader(arg('base') as string);
      search = (q, k) => {
        const top = new TopK(k);
        for (const key of idx.search(q, k * rescoreFactor, 1).keys) {
          const num = Number(key);
          const v = row(num);
          let s = 0;
          for (let d = 0; d < dim; d++) s += (q[d] as number) * (v[d] as number);
          top.push(s, num);
        }
        return top.result().map((h) => h.num);
      };
    }
  } else {
    const idx = new hnswlib.HierarchicalNSW('ip', dim);
    idx.readIndexSync(indexPath);
    setEf = (ef) => idx.setEf(ef);
    search = (q, k) => idx.searchKnn(Array.from(q), k).neighbors;
  }
  const openMs = performance.now() - t0;
  const rssOpen = rssMiB();
  for (const ef of efs) {
    setEf(ef);
    for (let i = 0; i < Math.min(200, nq); i++) search(queries.subarray(i * dim, (i + 1) * dim), 10); // warm
    const lat: number[] = [];
    let hits = 0;
    const start = performance.now();
    for (let i = 0; i < nq; i++) {
      const q = queries.subarray(i * dim, (i + 1) * dim);
      const t = performance.now();
      const got = search(q, 10);
      lat.push(performance.now() - t);
      const gt = new Set(truth.subarray(i * tk, i * tk + 10));
      for (const g of got) if (gt.has(g)) hits++;
    }
    const secs = (performance.now() - start) / 1000;
    const s = summarize(lat);
    rows.push({ efSearch: ef, recall10: hits / (nq * 10), p50ms: s.p50, p99ms: s.p99, qps: nq / secs });
    // usearch opens a fresh view per efSearch, so only the first pass is one index's footprint
    if (rssFirstPass === 0) rssFirstPass = rssMiB();
  }
  return { openMs, rssOpenMiB: rssOpen, rssServingMiB: rssFirstPass, rows };
}

const out = phase === 'build' ? build() : serve();
process.stdout.write(`${JSON.stringify({ engine, phase, ...out })}\n`);

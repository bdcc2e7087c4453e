/**
 * Our dense arm against faiss IVF1024,PQ96 (the index the DeepSearch-RL setup
 * serves wiki-18 with: recall@5 0.81 against Flat at 722 QPS, batch 100), in
 * one run, on the same vectors and queries: recall@5 and @10 against exact
 * search, QPS with 100 queries per call on 2 threads, index size and RSS.
 *
 * Uses the index `scale.js` built (`--name scale1m` by default); the faiss
 * index is trained once (on a 100k sample) and kept beside it.
 *
 *   npm run build && node dist/bench/ivfpq.js [--size 1000000] [--efs 64,128,256,384] [--nprobe 8,16,32,64,128]
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runProbe } from './lib/child.js';
import { arg, BENCH_DATA, printTable, ROOT, sizeLabel, writeResult } from './lib/common.js';
import { runIvfPq, type IvfPqFiles } from './lib/ivfpq.js';

const n = Number(arg('size', '1000000'));
const label = sizeLabel(n);
const py = arg('python', '/usr/bin/python3') as string;
const efs = arg('efs', '64,128,256,384') as string;
const nprobe = arg('nprobe', '8,16,32,64,128') as string;
const dir = join(BENCH_DATA, 'scale');
const indexDir = join(dir, 'indexes');
const name = `scale${label}`;
const vectors = join(dir, `vec-${label}.fbin`);
const queries = join(dir, 'q1000.f32');
const truth = join(dir, `truth-${label}.i32`);
const ivf = join(dir, `ivfpq-${label}.faiss`);
for (const need of [join(indexDir, name), vectors, queries, truth]) {
  if (!existsSync(need)) {
    process.stderr.write(`missing ${need}: run \`node dist/bench/scale.js --sizes ${n} --faiss false\` first\n`);
    process.exit(2);
  }
}

const faissFiles: IvfPqFiles = { vectors, queries, truth, index: ivf, nprobe, dim: 768 };
let faissBuild: Record<string, unknown> | null = null;
if (!existsSync(ivf)) {
  process.stderr.write(`training and filling ${ivf} (Debian faiss + OpenBLAS: about 10 minutes at 1M)\n`);
  faissBuild = runIvfPq(py, 'build', faissFiles).json;
}
const faissOut = runIvfPq(py, 'serve', faissFiles).json as {
  rssServingMiB: number;
  rows: Array<{ efSearch: number; recall5: number; recall10: number; qps: number }>;
};
const ours = runProbe(join(ROOT, 'dist/bench/scale-probe.js'), [
  '--index-dir',
  indexDir,
  '--name',
  name,
  '--queries',
  queries,
  '--truth',
  truth,
  '--efs',
  efs,
  '--hybrid-ef',
  '0', // no BM25/hybrid timing here
]);
const live = join(indexDir, name);
const mib = (p: string): number => Math.round(statSync(p).size / 2 ** 20);
const rows: Array<Record<string, string | number>> = [];
for (const d of ours['dense'] as Array<Record<string, number>>) {
  rows.push({
    engine: 'ours: i8 HNSW + f16 re-scoring',
    setting: `efSearch ${d['efSearch']}`,
    'recall@5': Number((d['batch100Recall5'] ?? NaN).toFixed(4)),
    'recall@10': Number((d['recall10'] ?? NaN).toFixed(4)),
    'QPS, batch 100': Math.round(d['batch100Qps'] ?? NaN),
    'QPS, one at a time': Math.round(d['qps'] ?? NaN),
    'index MiB': `${mib(join(live, 'dense.usearch'))} + ${mib(join(live, 'vectors.bin'))} on disk`,
    'RSS MiB': Math.round(ours['rssAfterMiB'] as number),
  });
}
for (const r of faissOut.rows) {
  rows.push({
    engine: 'faiss IVF1024,PQ96',
    setting: `nprobe ${r.efSearch}`,
    'recall@5': Number(r.recall5.toFixed(4)),
    'recall@10': Number(r.recall10.toFixed(4)),
    'QPS, batch 100': Math.round(r.qps),
    'QPS, one at a time': '—',
    'index MiB': mib(ivf),
    'RSS MiB': Math.round(faissOut.rssServingMiB),
  });
}
printTable(`${label} clustered 768-d vectors, 1,000 queries, 2 threads, recall against exact inner product`, rows);
writeResult('ivfpq', { n, rows, faissBuild, ours, faiss: faissOut });

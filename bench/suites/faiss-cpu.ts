/**
 * Our served dense arm against faiss-cpu from PyPI (its AVX2 build, at the
 * version DeepSearch-RL pins), in one run, on the same vectors and queries
 * as the wiki-18 scale runs (clustered 768-d unit vectors, 1,000 queries):
 *
 * - HNSW32: what `--faiss_type HNSW32` builds in FlashRAG and Search-R1
 *   (index_factory over inner product: efConstruction 40), served at faiss's
 *   default efSearch 16 (neither peer sets it) and deeper;
 * - IVF1024,PQ96,RFlat: DeepSearch-RL's IVF-PQ index with an exact
 *   re-ranking of k_factor_rf × k candidates from the float vectors, served at
 *   faiss's defaults (nprobe 1, k_factor_rf 1) and deeper.
 *
 * Ours is the index `scale.js` built for that size (i8 HNSW memory-mapped,
 * f16 vectors on disk), measured by scale-probe exactly as the server
 * searches, one process per efSearch, after reading its files through once
 * (faiss reads its whole index into memory before serving). For every engine
 * and setting: recall@10 and p50 one query at a time on one thread, recall@5
 * and QPS at 100 queries per call on 2 threads, build seconds, index size and
 * resident memory. faiss indexes are built
 * once and kept beside the vectors (with their build figures).
 *
 *   npm run bench -- scale --sizes 1000000,2000000 --faiss false   # our indexes, vectors, truth
 *   npm run bench -- faiss-cpu [--sizes 1000000,2000000] [--efs 64,128,256,384,768]
 *
 * Writes bench/results/faiss-cpu.json; BENCHMARKS.md's table is rendered from it.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { forEachFileChunk } from '../../src/util/hash-file.js';
import { runProbe } from '../lib/child.js';
import { arg, BENCH_DATA, BENCH_RESULTS, printTable, ROOT, sizeLabel, writeResult } from '../lib/common.js';
import { FAISS_CPU, faissPython, runFaiss, type FaissFiles, type FaissRun } from '../lib/faiss.js';

const sizes = (arg('sizes', '1000000,2000000') as string).split(',').map(Number);
const efs = arg('efs', '64,128,256,384,768') as string;
const dim = 768;
const dir = join(BENCH_DATA, 'scale');
const log = (line: string): void => void process.stderr.write(`${line}\n`);

/** The peers' indexes: the factory string, and the settings served (the first: faiss's defaults). */
const PEERS: Array<{ label: string; file: string; factory: string; params: string[] }> = [
  {
    label: 'faiss HNSW32',
    file: 'hnsw32',
    factory: 'HNSW32',
    params: ['efSearch=16', 'efSearch=64', 'efSearch=128', 'efSearch=256', 'efSearch=512'],
  },
  {
    label: 'faiss IVF1024,PQ96,RFlat',
    file: 'ivfpq96-rflat',
    factory: 'IVF1024,PQ96,RFlat',
    params: [
      'nprobe=1,k_factor_rf=1',
      'nprobe=16,k_factor_rf=4',
      'nprobe=32,k_factor_rf=4',
      'nprobe=64,k_factor_rf=8',
      'nprobe=128,k_factor_rf=16',
    ],
  },
];

interface Setting {
  efSearch: string | number;
  recall10: number;
  recall5: number;
  p50ms: number;
  qps: number;
}

const py = faissPython(log);
const mib = (p: string): number => Math.round(statSync(p).size / 2 ** 20);
/** scale.js's own build figures for that size, where its result file is here. */
function ourBuild(n: number): Record<string, number> {
  const path = join(BENCH_RESULTS, 'scale.json');
  if (!existsSync(path)) return {};
  const rows = (JSON.parse(readFileSync(path, 'utf8')) as { rows?: Array<Record<string, number>> }).rows ?? [];
  return rows.find((r) => r['passages'] === n) ?? {};
}

const rows: Array<Record<string, string | number>> = [];
const details: Record<string, unknown> = {};
for (const n of sizes) {
  const label = sizeLabel(n);
  const name = `scale${label}`;
  const files: FaissFiles = {
    vectors: join(dir, `vec-${label}.fbin`),
    queries: join(dir, 'q1000.f32'),
    truth: join(dir, `truth-${label}.i32`),
    index: '',
    dim,
  };
  const live = join(dir, 'indexes', name);
  for (const need of [live, files.vectors, files.queries, files.truth]) {
    if (!existsSync(need)) {
      log(`missing ${need}: run \`npm run bench -- scale --sizes ${n} --faiss false\` first`);
      process.exit(2);
    }
  }

  // faiss reads its whole index into memory before it serves; ours maps its files, so read them
  // once first, or the first setting would pay for the pages the faiss runs pushed out of the cache
  for (const f of ['dense.usearch', 'vectors.bin']) forEachFileChunk(join(live, f), () => undefined);
  const built = ourBuild(n);
  const ours: Array<Record<string, unknown>> = [];
  for (const ef of efs.split(',')) {
    log(`${label}: ours at efSearch ${ef}`);
    // one process per setting, so each resident-memory figure is that setting's alone
    const probe = runProbe(join(ROOT, 'dist/bench/lib/scale-probe.js'), [
      ...['--index-dir', join(dir, 'indexes'), '--name', name],
      ...['--queries', files.queries, '--truth', files.truth, '--efs', ef, '--hybrid-ef', '0'],
    ]);
    ours.push(probe);
    const d = (probe['dense'] as Array<Record<string, number>>)[0] ?? {};
    rows.push({
      size: label,
      engine: 'ours: i8 HNSW + f16 re-scoring',
      setting: `efSearch ${d['efSearch']}`,
      'recall@10, one at a time': Number((d['recall10'] ?? NaN).toFixed(4)),
      'p50 ms, one at a time': Number((d['p50ms'] ?? NaN).toFixed(2)),
      'recall@5, batch 100': Number((d['batch100Recall5'] ?? NaN).toFixed(4)),
      'QPS, batch 100': Math.round(d['batch100Qps'] ?? NaN),
      'build s': built['HNSW build s'] ?? '—',
      'index MiB': `${mib(join(live, 'dense.usearch'))} + ${mib(join(live, 'vectors.bin'))} f16`,
      'RSS MiB': Math.round(probe['rssAfterMiB'] as number),
    });
  }
  details[label] = { ours, faiss: {} as Record<string, unknown> };

  for (const peer of PEERS) {
    const index = join(dir, `faiss-${peer.file}-${label}.faiss`);
    const f = { ...files, index };
    const buildFile = `${index}.build.json`;
    if (!existsSync(index) || !existsSync(buildFile)) {
      log(`${label}: building ${peer.factory} with ${FAISS_CPU} on 2 threads`);
      const b = runFaiss(py, 'build', f, { factory: peer.factory, params: [], batch: 1, threads: 2 });
      writeFileSync(buildFile, JSON.stringify({ ...b.json, wallS: b.wallS, maxRssMiB: b.maxRssMiB }));
    }
    const build = JSON.parse(readFileSync(buildFile, 'utf8')) as Record<string, number>;
    const serve = (run: FaissRun): { rows: Setting[]; rssServingMiB: number; faissVersion: string } =>
      runFaiss(py, 'serve', f, run).json as unknown as { rows: Setting[]; rssServingMiB: number; faissVersion: string };
    log(`${label}: serving ${peer.factory} one query at a time, then 100 per call`);
    const one = serve({ factory: peer.factory, params: peer.params, batch: 1, threads: 1 });
    const hundred = serve({ factory: peer.factory, params: peer.params, batch: 100, threads: 2 });
    (details[label] as { faiss: Record<string, unknown> }).faiss[peer.factory] = { build, one, hundred };
    peer.params.forEach((p, i) => {
      const a = one.rows[i] as Setting;
      const b = hundred.rows[i] as Setting;
      rows.push({
        size: label,
        engine: peer.label,
        setting: `${p.replace(/=/g, ' ').replace(/,/g, ', ')}${i === 0 ? ' (faiss default)' : ''}`,
        'recall@10, one at a time': Number(a.recall10.toFixed(4)),
        'p50 ms, one at a time': Number(a.p50ms.toFixed(2)),
        'recall@5, batch 100': Number(b.recall5.toFixed(4)),
        'QPS, batch 100': Math.round(b.qps),
        'build s': Math.round(build['buildS'] ?? NaN),
        'index MiB': mib(index),
        'RSS MiB': Math.round(Math.max(one.rssServingMiB, hundred.rssServingMiB)),
      });
    });
  }
}
printTable(`Our dense arm against ${FAISS_CPU} on the same clustered 768-d vectors, 1,000 queries`, rows);
writeResult('faiss-cpu', { faiss: FAISS_CPU, sizes, rows, details });

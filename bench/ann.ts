/**
 * ANN engines on the same vectors: USearch (i8/f16/f32, ours), hnswlib-node
 * (the design card's pick), and faiss HNSW / Flat and hnswlib from Debian's
 * Python packages as reference peers. Each build and each serving run is its
 * own process. Recall@10 is against exact inner-product search.
 *
 *   npm run build && node dist/bench/ann.js --n 1000000 --kind clustered
 *   node dist/bench/ann.js --n 200000 --kind uniform
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exactSearch, MetricKind } from 'usearch';
import { arg, BENCH_DATA, printTable, ROOT, writeResult } from './lib/common.js';
import { runCommand, runProbe } from './lib/child.js';
import { ensureVectors, readVectors, type VectorKind } from './lib/vectors.js';

const n = Number(arg('n', '1000000'));
const kind = arg('kind', 'clustered') as VectorKind;
const dim = Number(arg('dim', '768'));
const nq = Number(arg('queries', '1000'));
const engines = (
  arg(
    'engines',
    'usearch-i8,usearch-i8+rescore,usearch-f16,usearch-f32,hnswlib-node,faiss-hnsw,hnswlib-py,faiss-flat',
  ) as string
).split(',');
const m = arg('m', '16') as string;
const efc = arg('efc', '128') as string;
const efs = arg('efs', '16,32,64,128,256') as string;
const py = arg('python', '/usr/bin/python3') as string;

const dir = join(BENCH_DATA, 'ann');
mkdirSync(dir, { recursive: true });
// --tag separates runs with other parameters (index files and results are named after it)
const tag = `${kind}-${n}${arg('tag') ? `-${arg('tag')}` : ''}`;
const base = join(dir, `${kind}-${n}.f32`);
const queries = join(dir, `${kind}-q${nq}.f32`);
const truthPath = join(dir, `${kind}-${n}-q${nq}.truth`);
const rescore = arg('rescore', '4') as string;
ensureVectors(base, kind, n, dim, 1);
ensureVectors(queries, kind, nq, dim, 2);
if (!existsSync(truthPath)) {
  const t0 = performance.now();
  const x = readVectors(base, dim);
  const q = readVectors(queries, dim);
  const r = exactSearch(x, q, dim, 100, MetricKind.IP, 2);
  const ids = new Int32Array(nq * 100);
  r.keys.forEach((k, i) => (ids[i] = Number(k)));
  writeFileSync(truthPath, ids);
  process.stderr.write(`ground truth (exact, 2 threads): ${((performance.now() - t0) / 1000).toFixed(1)}s\n`);
}

const rows: Array<Record<string, string | number>> = [];
const builtBy = new Map<string, Record<string, unknown>>();
for (const engine of engines) {
  const indexPath = join(dir, `${tag}.${engine}.idx`);
  const common = ['--engine', engine, '--dim', String(dim), '--m', m, '--efc', efc, '--index', indexPath];
  const isPy = engine.startsWith('faiss') || engine === 'hnswlib-py';
  let build: Record<string, unknown>;
  let serve: Record<string, unknown>;
  if (isPy) {
    const pyArgs = (phase: string): string[] => [
      join(ROOT, 'bench/ann_peer.py'),
      '--engine',
      engine === 'hnswlib-py' ? 'hnswlib' : engine,
      '--phase',
      phase,
      '--base',
      base,
      '--queries',
      queries,
      '--truth',
      truthPath,
      '--index',
      indexPath,
      '--dim',
      String(dim),
      '--m',
      m,
      '--efc',
      efc,
      '--efs',
      efs,
      // exhaustive search is ~1 s/query with Debian's generic faiss build: a subset suffices
      ...(engine === 'faiss-flat' ? ['--max-queries', arg('flat-queries', '100') as string] : []),
    ];
    const json = (out: string): Record<string, unknown> =>
      JSON.parse(out.split('\n').find((l) => l.startsWith('{')) ?? '{}') as Record<string, unknown>;
    const b = runCommand(py, pyArgs('build'));
    build = { ...json(b.stdout), maxRssMiB: b.maxRssMiB };
    serve = json(runCommand(py, pyArgs('serve')).stdout);
  } else {
    // +rescore serves the plain engine's index file
    const built = engine.replace('+rescore', '');
    const builtIndex = join(dir, `${tag}.${built}.idx`);
    const probeArgs = [...common.slice(0, -1), builtIndex];
    build =
      builtBy.get(built) ??
      runProbe(join(ROOT, 'dist/bench/ann-probe.js'), [...probeArgs, '--phase', 'build', '--base', base]);
    builtBy.set(built, build);
    serve = runProbe(join(ROOT, 'dist/bench/ann-probe.js'), [
      ...probeArgs,
      '--rescore',
      rescore,
      '--phase',
      'serve',
      '--base',
      base,
      '--queries',
      queries,
      '--truth',
      truthPath,
      '--efs',
      efs,
    ]);
  }
  for (const r of (serve['rows'] as Array<Record<string, number>>) ?? []) {
    rows.push({
      engine,
      'build s': Number(build['buildS']),
      'build peak RSS MiB': Math.round(Number(build['maxRssMiB'])),
      'index MiB': Math.round(Number(build['indexBytes']) / 2 ** 20),
      'serving RSS MiB': Math.round(Number(serve['rssServingMiB'])),
      efSearch: r['efSearch'] as number,
      'recall@10': r['recall10'] as number,
      'p50 ms': r['p50ms'] as number,
      QPS: Math.round(r['qps'] as number),
    });
  }
  process.stderr.write(`${engine}: ${JSON.stringify(rows.filter((r) => r['engine'] === engine))}\n`);
}
printTable(
  `ANN on ${n} ${kind} ${dim}-d unit vectors, M=${m}, efConstruction=${efc}, ${nq} queries, single-thread search`,
  rows,
);
writeResult(`ann-${tag}`, { n, kind, dim, m, efc, rows });

/**
 * The IVF index on real vectors: synthetic clustered vectors (ivf-scale) say what 21M costs, not
 * how well 1-bit codes rank real embeddings. Here real English Wikipedia passages (every 6th of
 * ../shared's enwiki-1m) embedded with the real e5-small-v2 (384-d, "passage: "), and real
 * questions (2Wiki and MultiHop-RAG, "query: ") as queries: our IVF (`--ann ivf`) at several
 * (probes, candidates re-scored), our HNSW (`--ann hnsw`, its defaults), and faiss-cpu's IVF-PQ
 * with a refiner and IVF-RaBitQ with the same lists, each scored by recall@10 against exact search
 * and the latency of one query at a time (warm page cache).
 *
 *   npm run bench -- ivf-calibration --vectors V.f32 --passages P.jsonl [--rows 98304]
 *     [--lists-sweep 128,512,2048]
 *
 * `--vectors` holds the passages' e5-small-v2 vectors as raw float32 rows in passage order (a
 * build's vectors.bin); `--passages` the wiki-18-format lines they were made from. Writes
 * bench/results/ivf-calibration.json.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { loadQueries } from '../../src/eval/queries.js';
import { arg, BENCH_DATA, printTable, ROOT, SHARED, writeResult } from '../lib/common.js';
import { buildWiki18Index, runCommand, runProbe } from '../lib/child.js';
import { faissPython } from '../lib/faiss.js';
import { openBenchCorpus, openManifestEncoder } from '../lib/retriever.js';
import { fetchRealModel, modelFetchOptions } from '../../scripts/models/real-models.js';

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const dim = 384;
const dir = join(BENCH_DATA, 'calib');
const vectorsIn = arg('vectors') as string;
const passagesIn = arg('passages') as string;
const available = Math.floor(statSync(vectorsIn).size / (dim * 4));
const rows = Math.min(Number(arg('rows', String(available))), available);
const lists = Number(arg('lists', String(Math.round(Math.sqrt(rows) * 2))));
// one directory per sample size: a build is skipped where its index exists
const indexDir = join(dir, `cal-indexes-${rows}`);
const model = await fetchRealModel('e5-small-v2', modelFetchOptions(log));

// the first `rows` vectors as .fbin and their passages, as the build imports them
const fbin = join(dir, `cal-${rows}.fbin`);
const passages = join(dir, `cal-${rows}.jsonl`);
if (!existsSync(fbin)) {
  const out = openSync(fbin, 'w');
  const head = Buffer.alloc(8);
  head.writeInt32LE(rows, 0);
  head.writeInt32LE(dim, 4);
  writeSync(out, head);
  const src = openSync(vectorsIn, 'r');
  const buf = Buffer.alloc(4096 * dim * 4);
  for (let done = 0; done < rows;) {
    const n = Math.min(4096, rows - done);
    readSync(src, buf, 0, n * dim * 4, done * dim * 4);
    writeSync(out, buf, 0, n * dim * 4);
    done += n;
  }
  closeSync(src);
  closeSync(out);
  execFileSync('sh', ['-c', `head -n ${rows} "${passagesIn}" > "${passages}"`]);
}

function build(name: string, ann: string[]): { wallS: number; maxRssMiB: number } {
  if (existsSync(join(indexDir, name, 'manifest.json'))) return { wallS: NaN, maxRssMiB: NaN };
  const b = buildWiki18Index(name, passages, indexDir, [
    ...['--vectors', fbin, '--model-path', model, '--vectors-dtype', 'f16', '--no-progress', ...ann],
  ]);
  return { wallS: b.wallS, maxRssMiB: b.maxRssMiB ?? NaN };
}
const ivfBuild = build('cal-ivf', ['--ann', 'ivf', '--ivf-lists', String(lists)]);
const hnswBuild = build('cal-hnsw', ['--ann', 'hnsw']);

// real questions as e5 queries: 2Wiki's and MultiHop-RAG's, 1,000 in all
const queriesPath = join(dir, `cal-queries.f32`);
if (!existsSync(queriesPath)) {
  const texts = [
    ...(await loadQueries('flashrag', join(SHARED, 'data/2wiki-200/queries.jsonl'))).map((q) => q.text),
    ...(await loadQueries('multihop', join(SHARED, 'data/multihop-rag/MultiHopRAG.surrogate.json'))).map((q) => q.text),
  ].slice(0, 1000);
  const corpus = openBenchCorpus(indexDir, 'cal-ivf');
  const encoder = await openManifestEncoder(corpus.manifest.dense!);
  try {
    const out = new Float32Array(texts.length * dim);
    for (let i = 0; i < texts.length; i += 64) {
      const vs = await encoder.embedQueries(texts.slice(i, i + 64));
      vs.forEach((v, j) => out.set(v, (i + j) * dim));
    }
    writeFileSync(queriesPath, Buffer.from(out.buffer));
  } finally {
    await encoder.close();
    corpus.close();
  }
}
const truth = join(dir, `cal-truth-${rows}.i32`);
const py = faissPython(log);
if (!existsSync(truth)) {
  runCommand(py, [
    join(ROOT, 'bench/peers/exact_topk.py'),
    ...['--vectors', join(indexDir, 'cal-ivf', 'vectors.bin'), '--dtype', 'f16', '--dim', String(dim)],
    ...['--queries', queriesPath, '--out', truth],
  ]);
}

interface ProbeOut {
  settings: Array<{ probes: number; rescore: number; recall10: number; p50ms: number; p99ms: number }>;
}
const out: Array<Record<string, string | number>> = [];
const probe = runProbe(join(ROOT, 'dist/bench/lib/ivf-probe.js'), [
  ...['--index-dir', indexDir, '--name', 'cal-ivf', '--queries', queriesPath, '--truth', truth, '--dim', String(dim)],
  ...[
    '--settings',
    arg('settings', '8:100,16:200,32:200,32:500,64:200,64:500,128:200,128:500,128:1000,256:500,256:2000') as string,
  ],
]) as unknown as ProbeOut;
for (const s of probe.settings) {
  out.push({
    index: `ours IVF${lists}, 1-bit codes`,
    setting: `probes ${s.probes}, re-score ${s.rescore}`,
    'recall@10': Number(s.recall10.toFixed(4)),
    'p50 ms': Number(s.p50ms.toFixed(2)),
    'p99 ms': Number(s.p99ms.toFixed(2)),
  });
}
// where the recall goes: the lists probed (every vector in them re-scored exactly, so the codes
// cost nothing), and the codes' estimate (every list probed, the estimate picks the candidates
// among all the vectors: at 200,000, as many as 128 lists of 21M hold). These re-score up to
// every vector a query, so they use the first `--diagnosis-queries` questions.
const diagnosisQueries = arg('diagnosis-queries', '300') as string;
const diagnosis = runProbe(join(ROOT, 'dist/bench/lib/ivf-probe.js'), [
  ...['--index-dir', indexDir, '--name', 'cal-ivf', '--queries', queriesPath, '--truth', truth, '--dim', String(dim)],
  ...['--queries-used', diagnosisQueries],
  ...[
    '--settings',
    [8, 4, 2].map((d) => `${lists / d}:${rows}`).join(',') + `,${lists}:200,${lists}:500,${lists}:2000`,
  ],
]) as unknown as ProbeOut;
const where = diagnosis.settings.map((s) => ({
  lost: s.rescore === rows ? 'lists' : 'codes',
  probes: s.probes,
  rescore: s.rescore,
  recall10: Number(s.recall10.toFixed(4)),
}));
// do the lists bound recall by their number probed or by their share? The same vectors cut into
// a quarter and four times the lists, probed at the same shares, every vector of the probed lists
// re-scored (so the codes cost nothing): what a corpus a hundred times larger, with its 4·√n
// lists, should expect of a share of its lists
const sweep: Array<{ lists: number; probes: number; recall10: number }> = [];
for (const l of (arg('lists-sweep', `${lists / 4},${lists},${lists * 4}`) as string).split(',').map(Number)) {
  const name = l === lists ? 'cal-ivf' : `cal-ivf-${l}`;
  if (l !== lists) build(name, ['--ann', 'ivf', '--ivf-lists', String(l)]);
  const shares = [64, 32, 16, 8, 4].filter((d) => l / d >= 1);
  const r = runProbe(join(ROOT, 'dist/bench/lib/ivf-probe.js'), [
    ...['--index-dir', indexDir, '--name', name, '--queries', queriesPath, '--truth', truth, '--dim', String(dim)],
    ...['--settings', shares.map((d) => `${l / d}:${rows}`).join(',')],
    ...['--queries-used', diagnosisQueries],
  ]) as unknown as ProbeOut;
  for (const x of r.settings) sweep.push({ lists: l, probes: x.probes, recall10: Number(x.recall10.toFixed(4)) });
}
// the HNSW index at its own defaults (probes and re-scoring mean nothing to it)
const hnsw = (
  runProbe(join(ROOT, 'dist/bench/lib/ivf-probe.js'), [
    ...[
      '--index-dir',
      indexDir,
      '--name',
      'cal-hnsw',
      '--queries',
      queriesPath,
      '--truth',
      truth,
      '--dim',
      String(dim),
    ],
    ...['--settings', '1:1'],
  ]) as unknown as { settings: Array<{ recall10: number; p50ms: number; p99ms: number }> }
).settings[0] as { recall10: number; p50ms: number; p99ms: number };
const hnswAnn = (
  JSON.parse(readFileSync(join(indexDir, 'cal-hnsw', 'manifest.json'), 'utf8')) as {
    dense: { ann: Record<string, unknown> };
  }
).dense.ann;
out.push({
  index: `ours HNSW (${String(hnswAnn['quantization'])} graph, M ${String(hnswAnn['connectivity'])}, re-scored)`,
  setting: `efSearch ${String(hnswAnn['expansion_search'])}`,
  'recall@10': Number(hnsw.recall10.toFixed(4)),
  'p50 ms': Number(hnsw.p50ms.toFixed(2)),
  'p99 ms': Number(hnsw.p99ms.toFixed(2)),
});

for (const [key, factory, params] of [
  [
    'ivfpq',
    `IVF${lists},PQ48,Refine(SQ8)`,
    'nprobe=16,k_factor_rf=10|nprobe=32,k_factor_rf=20|nprobe=64,k_factor_rf=50',
  ],
  ['rabitq', `IVF${lists},RaBitQ`, 'nprobe=16|nprobe=32|nprobe=64'],
  [
    'rabitq-refine',
    `IVF${lists},RaBitQ,Refine(SQ8)`,
    'nprobe=16,k_factor_rf=10|nprobe=32,k_factor_rf=20|nprobe=64,k_factor_rf=50|nprobe=128,k_factor_rf=100',
  ],
] as const) {
  const index = join(dir, `cal-faiss-${key}-${rows}.faiss`);
  const vectors = join(indexDir, 'cal-ivf', 'vectors.bin');
  if (!existsSync(index)) {
    runCommand(py, [
      join(ROOT, 'bench/peers/faiss_ivf_peer.py'),
      ...['--phase', 'build', '--vectors', vectors, '--dim', String(dim), '--factory', factory, '--index', index],
      ...['--train', String(Math.min(rows, lists * 40))],
    ]);
  }
  const s = spawnSync(
    py,
    [
      join(ROOT, 'bench/peers/faiss_ivf_peer.py'),
      ...['--phase', 'serve', '--vectors', vectors, '--dim', String(dim), '--factory', factory, '--index', index],
      ...['--queries', queriesPath, '--truth', truth, '--params', params],
    ],
    { encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  if (s.status !== 0) throw new Error(`faiss serve failed: ${s.stderr}`);
  const r = JSON.parse(s.stdout.trim().split('\n').pop() as string) as {
    rows: Array<{ setting: string; recall10: number; p50ms: number; p99ms: number }>;
  };
  for (const x of r.rows) {
    out.push({
      index: `faiss ${factory}`,
      setting: x.setting,
      'recall@10': Number(x.recall10.toFixed(4)),
      'p50 ms': Number(x.p50ms.toFixed(2)),
      'p99 ms': Number(x.p99ms.toFixed(2)),
    });
  }
}
printTable(`Real e5-small-v2 vectors, ${rows} passages`, out);
writeResult('ivf-calibration', {
  about: `${rows.toLocaleString('en')} real English Wikipedia passages embedded by e5-small-v2 (384-d), 1,000 real questions (2Wiki, MultiHop-RAG) as queries; recall@10 against exact search, one query at a time, warm page cache.`,
  rows: out,
  where,
  sweep,
  diagnosisQueries: Number(diagnosisQueries),
  builds: { ivf: ivfBuild, hnsw: hnswBuild },
  lists,
  vectors: rows,
});

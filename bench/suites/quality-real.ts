/**
 * Retrieval quality with real embedding models, on every data set in
 * ../shared: bm25, dense and hybrid (RRF k 60, pools of 100, the defaults),
 * and hybrid with RRF k, the dense arm's weight and the pool depth tuned on
 * one half of the queries and reported on the other half.
 *
 *   npm run build:bench
 *   npm run bench -- quality-real [--model all-MiniLM-L6-v2] [--datasets 2wiki,multihop]
 *
 * Each index is built by the real CLI with `--model-path DIR` and no other
 * encoder flag, so this also checks that a model's own files are enough.
 * Halves: queries at even positions tune, those at odd positions are held out.
 * Writes bench/results/quality-<model>.json; the README table is rendered from it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadQueries, type EvalQuery } from '../../src/eval/queries.js';
import { createJudge, type EvalRow } from '../../src/eval/run-eval.js';
import { fuseRrf } from '../../src/search/fuse.js';
import type { SearchHit } from '../../src/search/types.js';
import { arg, BENCH_DATA, BENCH_RESULTS, ROOT, writeResult } from '../lib/common.js';
import { DATASETS, type Dataset } from '../lib/datasets.js';
import { fetchRealModel, modelFetchOptions, REAL_MODELS, variantArgs } from '../../scripts/models/real-models.js';
import { benchRetriever, openBenchCorpus, openManifestEncoder } from '../lib/retriever.js';

const GRID = {
  k: [5, 10, 20, 40, 60, 100],
  denseWeight: [0.33, 0.5, 0.67, 1, 1.5, 2, 3],
  depth: [20, 50, 100],
};
const KS = [1, 3, 5, 10];
const POOL = 100;

const models = arg('model') ? [arg('model') as string] : Object.keys(REAL_MODELS);
const datasets = arg('datasets') ? DATASETS.filter((d) => arg('datasets')!.split(',').includes(d.name)) : DATASETS;
const log = (line: string): void => void process.stderr.write(`${line}\n`);
// --dense-text RULE builds with that rule instead of each format's convention; its results are
// tagged (quality-MODEL-text-RULE.json), which is how the convention per format is measured
const denseText = arg('dense-text');
const tag = denseText ? `-text-${denseText}` : '';

for (const model of models) {
  const dir = await fetchRealModel(model, modelFetchOptions(log));
  const indexDir = join(BENCH_DATA, 'real-indexes', `${model}${tag}`);
  const out: Record<string, unknown>[] = [];
  for (const d of datasets) {
    const built = existsSync(join(indexDir, d.name, 'manifest.json'));
    const t0 = performance.now();
    if (!built) {
      log(`${model} / ${d.name}: building`);
      execFileSync(
        'node',
        [
          join(ROOT, 'bin/build-index.js'),
          ...['--name', d.name, '--input', d.input, '--format', d.format],
          ...['--index-dir', indexDir, '--model-path', dir, ...variantArgs(model), '--no-progress'],
          ...(denseText ? ['--dense-text', denseText] : []),
        ],
        { stdio: ['ignore', 2, 2] },
      );
    }
    const buildSeconds = built ? null : (performance.now() - t0) / 1000;
    out.push({ dataset: d.name, buildSeconds, ...(await measure(d, indexDir)) });
  }
  // --merge: re-measure only the --datasets given and keep the others from the result file
  const file = join(BENCH_RESULTS, `quality-${model}${tag}.json`);
  const before =
    process.argv.includes('--merge') && existsSync(file)
      ? (JSON.parse(readFileSync(file, 'utf8')) as {
          date: string;
          commit: string;
          datasets: Array<{ dataset: string; ran?: unknown }>;
        })
      : undefined;
  // a kept data set says when it ran
  const kept = (before?.datasets ?? [])
    .filter((d) => !out.some((o) => o['dataset'] === d.dataset))
    .map((d) => ({ ...d, ran: d.ran ?? { date: before?.date, commit: before?.commit } }));
  const order = DATASETS.map((d) => d.name);
  const datasetsOut = [...kept, ...out].sort(
    (a, b) => order.indexOf(String(a['dataset'])) - order.indexOf(String(b['dataset'])),
  );
  writeResult(`quality-${model}${tag}`, {
    model,
    about: REAL_MODELS[model]!.about,
    ...(denseText ? { denseText } : {}),
    ...(kept.length > 0
      ? { merged: `${out.map((o) => String(o['dataset'])).join(', ')} re-measured; the rest kept` }
      : {}),
    grid: GRID,
    pool: POOL,
    datasets: datasetsOut,
  });
}

async function measure(d: Dataset, indexDir: string): Promise<Record<string, unknown>> {
  const corpus = openBenchCorpus(indexDir, d.name);
  const encoder = await openManifestEncoder(corpus.manifest.dense!);
  try {
    const retriever = benchRetriever(corpus, encoder, 10);
    const queries = await loadQueries(d.queryFormat, d.queries);
    const judge = createJudge(corpus.store, corpus.manifest.corpus.chunks, {
      ks: KS,
      evidenceThreshold: 0.7,
    });
    const docLevel = d.queryFormat === 'multihop' && corpus.manifest.corpus.chunks > corpus.manifest.corpus.documents;
    const depth = docLevel ? 50 : 10;
    const lists: Record<string, SearchHit[][]> = {};
    for (const mode of ['bm25', 'dense', 'hybrid'] as const) {
      const topK = mode === 'hybrid' ? depth : POOL;
      lists[mode] = [];
      for (let i = 0; i < queries.length; i += 64) {
        const res = await retriever.searchMany(
          queries.slice(i, i + 64).map((q) => q.text),
          { topK, mode, corpus: d.name },
        );
        for (const r of res) lists[mode].push((r as { results: SearchHit[] }).results);
      }
    }
    const cut = (ls: SearchHit[][]): SearchHit[][] => ls.map((l) => l.slice(0, depth));
    const all = (mode: string, ls: SearchHit[][]): EvalRow => judge.rows(mode, queries, ls)[0]!;
    const rows = [
      all('bm25', cut(lists['bm25']!)),
      all('dense', cut(lists['dense']!)),
      all('hybrid', lists['hybrid']!),
    ];
    // tuning on the even half, reported on the odd half
    const half = (qs: EvalQuery[], parity: number): number[] => qs.map((_, i) => i).filter((i) => i % 2 === parity);
    const tuneIdx = half(queries, 0);
    const testIdx = half(queries, 1);
    const pick = <T>(xs: T[], idx: number[]): T[] => idx.map((i) => xs[i] as T);
    const held = (mode: string, ls: SearchHit[][]): EvalRow =>
      judge.rows(mode, pick(queries, testIdx), pick(ls, testIdx))[0]!;
    // every grid point scored on both halves: the tuning picks on one, the report reads the other
    const grid: Array<{ k: number; denseWeight: number; depth: number; tune: number; heldOut: number }> = [];
    let best = { score: -1, k: 60, denseWeight: 1, depth: 100 };
    for (const k of GRID.k)
      for (const denseWeight of GRID.denseWeight)
        for (const pool of GRID.depth) {
          const fused = fuse(lists['bm25']!, lists['dense']!, k, denseWeight, pool, depth);
          const tune = judge.rows('tune', pick(queries, tuneIdx), pick(fused, tuneIdx))[0]!.metrics[d.objective] ?? 0;
          const heldOut = held('held', fused).metrics[d.objective] ?? 0;
          grid.push({ k, denseWeight, depth: pool, tune, heldOut });
          if (tune > best.score) best = { score: tune, k, denseWeight, depth: pool };
        }
    const heldOut = [
      held('bm25', cut(lists['bm25']!)),
      held('dense', cut(lists['dense']!)),
      held('hybrid', lists['hybrid']!),
      held('hybrid-tuned', fuse(lists['bm25']!, lists['dense']!, best.k, best.denseWeight, best.depth, depth)),
    ];
    log(
      `${d.name}: ${rows.map((r) => `${r.mode} ${fmt(r.metrics[d.objective])}`).join(', ')}; tuned ${JSON.stringify(best)}`,
    );
    return {
      queries: queries.length,
      chunks: corpus.manifest.corpus.chunks,
      encoder: corpus.manifest.dense!.encoder.id,
      objective: d.objective,
      rows,
      tuned: { ...best, tuneQueries: tuneIdx.length, heldOutQueries: testIdx.length, heldOut },
      grid,
    };
  } finally {
    await encoder.close();
    corpus.close();
  }
}

/** The product's RRF over each arm's first `pool` hits, with the dense arm weighted. */
function fuse(
  bm25: SearchHit[][],
  dense: SearchHit[][],
  k: number,
  denseWeight: number,
  pool: number,
  topK: number,
): SearchHit[][] {
  return bm25.map((b, i) => {
    const byNum = new Map<number, SearchHit>();
    const numOf = new Map<string, number>();
    const ranked = (hits: SearchHit[]): Array<{ num: number; score: number }> =>
      hits.slice(0, pool).map((h) => {
        let num = numOf.get(h.id);
        if (num === undefined) {
          num = numOf.size;
          numOf.set(h.id, num);
          byNum.set(num, h);
        }
        return { num, score: h.score };
      });
    const lists = [
      { arm: 'bm25', hits: ranked(b), weight: 1 },
      { arm: 'dense', hits: ranked(dense[i] ?? []), weight: denseWeight },
    ];
    return fuseRrf(lists, { k, topK, idOf: (n) => byNum.get(n)!.id }).map((f) => byNum.get(f.num)!);
  });
}

function fmt(v: number | undefined): string {
  return v === undefined ? '-' : v.toFixed(4);
}

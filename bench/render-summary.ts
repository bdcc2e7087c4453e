/**
 * Renders BENCHMARKS.md's summary table from the results the benches wrote
 * (bench/results/*.json): one row per result file, its headline figures,
 * the date and the commit it ran at. The table sits between the
 * `<!-- summary:start -->` and `<!-- summary:end -->` markers; nothing in it
 * is typed by hand. `--check` fails when the file is out of date.
 *
 *   npm run build:bench && node dist/bench/render-summary.js [--check]
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'prettier';
import { BENCH_RESULTS, ROOT } from './lib/common.js';

type Result = Record<string, unknown> & { date?: string; commit?: string };
type Row = Record<string, string | number>;

/** The headline of each result file: what it measured and the figure that answers it. */
const HEADLINES: Record<string, { what: string; command: string; figure: (r: Result) => string }> = {
  'memory-soak': {
    what: 'RSS under 100k distinct top-100 queries and the adversarial patterns',
    command: 'node dist/bench/memory-soak.js',
    figure: (r) => {
      const row = rows(r)[0] ?? {};
      return `max ${row['max RSS MiB']} MiB (bound ${row['bound MiB']}), ${row['non-200 answers']} non-200`;
    },
  },
  'event-loop-bm25': {
    what: '/health p99 under BM25 load (8 × 256-query batches / 256 clients)',
    command: 'node dist/bench/event-loop-bm25.js',
    figure: (r) =>
      rows(r)
        .slice(0, 2)
        .map((x) => `${fmt(x['health p99 ms'])} ms`)
        .join(' / '),
  },
  'event-loop': {
    what: '/health p99 with the encoder saturated',
    command: 'node dist/bench/event-loop.js',
    figure: (r) => `${fmt(rows(r)[0]?.['/health p99 ms'])} ms`,
  },
  load: {
    what: '256 clients × 60 s, BERT-base: errors (hybrid on / off, dense)',
    command: 'node dist/bench/load.js',
    figure: (r) =>
      rows(r)
        .map((x) => `${x['errors']}`)
        .join(' / '),
  },
  'load-tiny': {
    what: '256 clients, tiny e5: errors (hybrid on / off, dense)',
    command: 'node dist/bench/load.js --model ../shared/models/tiny-e5 --tag tiny',
    figure: (r) =>
      rows(r)
        .map((x) => `${x['errors']}`)
        .join(' / '),
  },
  soak: {
    what: 'steady hybrid load: requests, errors, RSS at the end',
    command: 'node dist/bench/soak.js',
    figure: (r) => {
      const x = rows(r)[0] ?? {};
      return `${x['requests']} requests, ${x['errors']} errors, ${x['RSS at end MiB']} MiB`;
    },
  },
  determinism: {
    what: 'the same 300 queries in 3 fresh processes',
    command: 'node dist/bench/determinism.js',
    figure: (r) => (r['identical'] === true ? 'byte-identical' : 'differ'),
  },
  'engine-failover': {
    what: 'OpenSearch backend, 3 nodes: cluster manager killed under 256 clients',
    command: 'node dist/bench/engine-failover.js',
    figure: (r) =>
      `${(r['firstTenSeconds'] as { errors: number }).errors + (r['rest'] as { errors: number }).errors} errors, ${String(r['chunksAfter'])} of ${String(r['chunks'])} chunks after`,
  },
  scale: {
    what: 'wiki-18 scale, generated 1M / 2M passages: build, ready, dense R@10 at the default efSearch',
    command: 'node dist/bench/scale.js --sizes 1000000,2000000 --faiss false',
    figure: (r) =>
      rows(r)
        .map((x) => `${fmt(x['build s'])} s, ${fmt(x['ready s'])} s, ${fmt(x['dense R@10'])}`)
        .join(' / '),
  },
  'faiss-cpu': {
    what: 'dense arm vs faiss-cpu HNSW32 at its default efSearch 16: recall@10, 1M (ours / faiss)',
    command: 'node dist/bench/faiss-cpu.js',
    figure: (r) => {
      const at = (engine: string, setting: string): string =>
        fmt(
          rows(r).find(
            (x) => x['size'] === '1m' && x['engine'] === engine && String(x['setting']).startsWith(setting),
          )?.['recall@10, one at a time'],
        );
      return `${at('ours: i8 HNSW + f16 re-scoring', 'efSearch 128')} / ${at('faiss HNSW32', 'efSearch 16')}`;
    },
  },
  'stateless-dispatch': {
    what: 'stateless MCP call, direct dispatch / public SDK path (median p50)',
    command: 'node dist/bench/experiments/stateless-dispatch.js',
    figure: (r) =>
      rows(r)
        .map((x) => `${fmt(x['median of rounds ms'])} ms`)
        .join(' / '),
  },
};

function rows(r: Result, key = 'rows'): Row[] {
  const v = r[key];
  return Array.isArray(v) ? (v as Row[]) : [];
}

function fmt(v: unknown): string {
  if (typeof v !== 'number') return String(v ?? '?');
  return Number.isInteger(v) ? String(v) : v.toFixed(v < 1 ? 2 : 1);
}

export function renderSummary(results: Record<string, Result>): string {
  const lines = [
    '| what | figure | run | command |',
    '| --- | --- | --- | --- |',
    ...Object.entries(HEADLINES)
      .filter(([name]) => results[name])
      .map(([name, h]) => {
        const r = results[name] as Result;
        const run = `${(r.date ?? '').slice(0, 10)} at ${r.commit ?? 'unknown'}`;
        return `| ${h.what} | ${h.figure(r)} | ${run} | \`${h.command}\` ([json](bench/results/${name}.json)) |`;
      }),
  ];
  return lines.join('\n');
}

const results: Record<string, Result> = {};
if (existsSync(BENCH_RESULTS)) {
  for (const f of readdirSync(BENCH_RESULTS).filter((n) => n.endsWith('.json'))) {
    results[f.replace(/\.json$/, '')] = JSON.parse(readFileSync(join(BENCH_RESULTS, f), 'utf8')) as Result;
  }
}

/** Each generated block: the file, its markers' name, and what goes between them. */
const BLOCKS: Array<{ file: string; name: string; render: () => string }> = [
  { file: 'BENCHMARKS.md', name: 'summary', render: () => renderSummary(results) },
  { file: 'BENCHMARKS.md', name: 'quality', render: () => renderQuality(results) },
  { file: 'BENCHMARKS.md', name: 'numerics', render: () => renderNumerics(results) },
  { file: 'BENCHMARKS.md', name: 'bm25-real', render: () => renderBm25Real(results) },
  { file: 'BENCHMARKS.md', name: 'scale-corpus', render: () => renderScaleCorpus(results) },
  { file: 'BENCHMARKS.md', name: 'side-by-side', render: () => renderSideBySide(results) },
  { file: 'BENCHMARKS.md', name: 'engine', render: () => renderEngine(results) },
  { file: 'BENCHMARKS.md', name: 'mcp-side-by-side', render: () => renderMcpSideBySide(results) },
  { file: 'README.md', name: 'quality', render: () => renderReadmeQuality(results) },
  { file: 'BENCHMARKS.md', name: 'seed-ratios', render: () => renderSeedRatios(results, false) },
  { file: 'BENCHMARKS.md', name: 'faiss-cpu', render: () => renderFaissCpu(results) },
  { file: 'README.md', name: 'seed-ratios', render: () => renderSeedRatios(results, true) },
];

interface QualityRow {
  mode: string;
  metrics: Record<string, number>;
}
interface QualityDataset {
  dataset: string;
  queries: number;
  chunks: number;
  objective: string;
  rows: QualityRow[];
  tuned: { k: number; denseWeight: number; depth: number; heldOutQueries: number; heldOut: QualityRow[] };
}

const DATASET_NAMES: Record<string, string> = {
  '2wiki': '2WikiMultiHopQA dev (200), supporting ids',
  'graphrag-medical': 'GraphRAG-Bench medical (2,062)',
  'graphrag-novel': 'GraphRAG-Bench novel (2,010)',
  multihop: 'MultiHop-RAG **surrogate** (2,255)',
};

function qualityResults(results: Record<string, Result>): Array<[string, Result]> {
  return Object.entries(results)
    .filter(([name]) => name.startsWith('quality-'))
    .sort(([a], [b]) => a.localeCompare(b));
}

function m(row: QualityRow | undefined, metric: string): string {
  const v = row?.metrics[metric];
  return typeof v === 'number' ? v.toFixed(4) : '—';
}

/** Per model and data set: every query for the defaults, the held-out half for the tuned fusion. */
export function renderQuality(results: Record<string, Result>): string {
  const out: string[] = [];
  for (const [name, r] of qualityResults(results)) {
    out.push(
      `**${String(r['model'])}**: ${String(r['about'])}. Run ${(r.date ?? '').slice(0, 10)} at ${r.commit ?? 'unknown'}, ` +
        `[json](bench/results/${name}.json).`,
      '',
      '| data set | chunks | arm | R@5 | R@10 | nDCG@10 | held-out R@5 | held-out R@10 |',
      '| --- | --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const d of (r['datasets'] as QualityDataset[]) ?? []) {
      const held = (mode: string): QualityRow | undefined => d.tuned.heldOut.find((x) => x.mode === mode);
      for (const row of d.rows) {
        out.push(
          `| ${DATASET_NAMES[d.dataset] ?? d.dataset} | ${d.chunks} | ${row.mode} | ${m(row, 'R@5')} | ${m(row, 'R@10')} | ${m(row, 'nDCG@10')} | ${m(held(row.mode), 'R@5')} | ${m(held(row.mode), 'R@10')} |`,
        );
      }
      const t = held('hybrid-tuned');
      out.push(
        `| ${DATASET_NAMES[d.dataset] ?? d.dataset} | ${d.chunks} | hybrid tuned (k ${d.tuned.k}, dense × ${d.tuned.denseWeight}, pools of ${d.tuned.depth}) | — | — | — | ${m(t, 'R@5')} | ${m(t, 'R@10')} |`,
      );
    }
    out.push('');
  }
  const common = commonFusion(results);
  if (common) out.push(common);
  return out.length > 0 ? out.join('\n').trim() : '_No real-model results yet: run `node dist/bench/quality-real.js`._';
}

interface GridPoint {
  k: number;
  denseWeight: number;
  depth: number;
  tune: number;
  heldOut: number;
}

/**
 * One fusion setting for every model and data set: the grid point with the
 * best mean objective over all of them on the tuning halves, then its
 * held-out score beside the default's (RRF k 60, equal weights, pools of 100).
 */
function commonFusion(results: Record<string, Result>): string | undefined {
  const sets = qualityResults(results).flatMap(([, r]) =>
    ((r['datasets'] as Array<QualityDataset & { grid?: GridPoint[] }>) ?? [])
      .filter((d) => Array.isArray(d.grid) && d.grid.length > 0)
      .map((d) => ({ model: String(r['model']), d, grid: d.grid as GridPoint[] })),
  );
  if (sets.length === 0) return undefined;
  const key = (g: Pick<GridPoint, 'k' | 'denseWeight' | 'depth'>): string => `${g.k}/${g.denseWeight}/${g.depth}`;
  const mean = new Map<string, number>();
  for (const s of sets) for (const g of s.grid) mean.set(key(g), (mean.get(key(g)) ?? 0) + g.tune / sets.length);
  const [bestKey] = [...mean].sort((a, b) => b[1] - a[1])[0] as [string, number];
  const [k, w, depth] = bestKey.split('/');
  const lines = [
    `**One setting for all**: the grid point with the best mean tuning-half R@5 over every model and data set is RRF k ${k}, dense × ${w}, pools of ${depth}, the product's default since 2026-11-25 (it was k 60, equal weights, pools of 100). Held-out R@5:`,
    '',
    '| model | data set | RRF k 60, equal weights, pools of 100 | common setting | BM25 | dense |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const s of sets) {
    const point = s.grid.find((g) => key(g) === bestKey);
    const classic = s.grid.find((g) => key(g) === '60/1/100');
    const held = (mode: string): QualityRow | undefined => s.d.tuned.heldOut.find((x) => x.mode === mode);
    lines.push(
      `| ${s.model} | ${DATASET_NAMES[s.d.dataset] ?? s.d.dataset} | ${classic ? classic.heldOut.toFixed(4) : '—'} | ${point ? point.heldOut.toFixed(4) : '—'} | ${m(held('bm25'), 'R@5')} | ${m(held('dense'), 'R@5')} |`,
    );
  }
  return lines.join('\n');
}

/** README: R@5 per arm, one model per column group, each cell one figure. */
export function renderReadmeQuality(results: Record<string, Result>): string {
  const models = qualityResults(results);
  if (models.length === 0) return '_No real-model results yet._';
  const header = [
    'data set (queries)',
    'BM25',
    ...models.flatMap(([, r]) => {
      // README is narrow: all-MiniLM-L6-v2-int8 → MiniLM int8
      const short = String(r['model'])
        .replace(/^all-(MiniLM)-L6-v2/, '$1')
        .replace(/-int8$/, ' int8');
      return [`dense ${short}`, `hybrid ${short}`];
    }),
  ];
  const lines = [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`];
  const first = (models[0]?.[1]['datasets'] as QualityDataset[]) ?? [];
  for (const d of first) {
    const cells = [
      DATASET_NAMES[d.dataset] ?? d.dataset,
      m(
        d.rows.find((x) => x.mode === 'bm25'),
        'R@5',
      ),
    ];
    for (const [, r] of models) {
      const ds = ((r['datasets'] as QualityDataset[]) ?? []).find((x) => x.dataset === d.dataset);
      cells.push(
        m(
          ds?.rows.find((x) => x.mode === 'dense'),
          'R@5',
        ),
        m(
          ds?.rows.find((x) => x.mode === 'hybrid'),
          'R@5',
        ),
      );
    }
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/** A cosine near 1 as 1 − its distance from 1, so that the digits that differ show. */
function oneMinus(c: number): string {
  return c >= 1 ? '1' : `1 − ${(1 - c).toExponential(1)}`;
}

/** The product's vectors against the Python references, and the encoders' speed in the same run. */
export function renderNumerics(results: Record<string, Result>): string {
  const entries = Object.entries(results)
    .filter(([name]) => name.startsWith('numerics-'))
    .sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return '_No numerics results yet: run `node dist/bench/models/numerics.js`._';
  const lines = [
    '| model | reference | min cosine | mean cosine | texts/s, reference | texts/s, ours | ours ÷ reference | query p50 ms, reference | query p50 ms, ours | run |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const [name, r] of entries) {
    const ours = r['ours'] as { texts_per_s: number; query_p50_ms: number };
    for (const ref of (r['references'] as Array<Record<string, unknown>>) ?? []) {
      const cos = ref['cosine'] as { min: number; mean: number };
      const tps = ref['texts_per_s'] as number;
      const engine = ref['engine'] === 'st' ? 'sentence-transformers' : 'tokenizers + onnxruntime (Python)';
      lines.push(
        `| ${String(r['model'])} | ${engine} | ${oneMinus(cos.min)} | ${oneMinus(cos.mean)} | ${tps.toFixed(1)} | ${ours.texts_per_s.toFixed(1)} | ${(ours.texts_per_s / tps).toFixed(2)} | ${(ref['query_p50_ms'] as number).toFixed(2)} | ${ours.query_p50_ms.toFixed(2)} | ${(r.date ?? '').slice(0, 10)} at ${r.commit ?? 'unknown'}, [json](bench/results/${name}.json) |`,
      );
    }
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const prettierOptions = JSON.parse(readFileSync(join(ROOT, '.prettierrc.json'), 'utf8')) as object;
  let stale = 0;
  for (const file of [...new Set(BLOCKS.map((b) => b.file))]) {
    const path = join(ROOT, file);
    const doc = readFileSync(path, 'utf8');
    let next = doc;
    for (const block of BLOCKS.filter((b) => b.file === file)) {
      const start = `<!-- ${block.name}:start -->`;
      const end = `<!-- ${block.name}:end -->`;
      const a = next.indexOf(start);
      const b = next.indexOf(end);
      if (a === -1 || b === -1) throw new Error(`${file} lacks the ${start} … ${end} markers`);
      next = `${next.slice(0, a + start.length)}\n\n${block.render()}\n\n${next.slice(b)}`;
    }
    // formatted as `npm run check`'s prettier would, so the check compares like with like
    next = await format(next, { ...prettierOptions, parser: 'markdown' });
    if (process.argv.includes('--check')) {
      if (next !== doc) {
        process.stderr.write(`${file}: generated tables are out of date: run node dist/bench/render-summary.js\n`);
        stale++;
      }
    } else {
      writeFileSync(path, next);
      process.stdout.write(`rendered ${file}\n`);
    }
  }
  if (stale > 0) process.exitCode = 1;
}

await main();

type KStats = Record<string, { p50_ms: number; p99_ms: number; qps: number; qps_2_threads?: number }>;

/** BM25 on real Wikipedia text against Lucene, bm25s and tantivy, one query at a time. */
export function renderBm25Real(results: Record<string, Result>): string {
  // smallest corpus first
  const present = ['bm25-real', 'bm25-real-2m', 'bm25-real-21m'].filter((name) => results[name]);
  if (present.length === 0) return '_No results yet: run `node dist/bench/bm25-real.js`._';
  const lines = [
    '| passages | queries | engine | top-10 p50 ms | top-10 p99 ms | top-100 p50 ms | top-100 p99 ms | top-100 p50 ÷ Lucene | top-100 QPS, 2 threads | overlap@10 with ours | nDCG@10 vs ours | index MiB | build s |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const ms = (v: number | undefined): string => (v === undefined ? '—' : v.toFixed(2));
  const runs: string[] = [];
  for (const name of present) {
    const r = results[name] as Result;
    const n = (r['passages'] as number | undefined) ?? 1_232_684;
    const passages = `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 2)}M`;
    for (const set of (r['results'] as Array<Record<string, unknown>>) ?? []) {
      const label = `${String(set['queries'])} (${String(set['count'])}, ${(set['meanWords'] as number).toFixed(1)} words)`;
      const ours = set['ours'] as {
        by_k: KStats;
        exhaustive_by_k?: KStats;
        two_threads_by_k?: KStats;
        index_bytes: number;
        build_s: number | null;
      };
      const peers = set['peers'] as Record<
        string,
        { by_k: KStats; index_bytes: number; build_s: number; overlap10: number; ndcg10?: number }
      >;
      const lucene = peers['lucene']?.by_k['100']?.p50_ms;
      const ratio = (v: number | undefined): string =>
        v === undefined || lucene === undefined ? '—' : `${(v / lucene).toFixed(2)}×`;
      const row = (engine: string, by: KStats, rest: string): void => {
        lines.push(
          `| ${passages} | ${label} | ${engine} | ${ms(by['10']?.p50_ms)} | ${ms(by['10']?.p99_ms)} | ${ms(by['100']?.p50_ms)} | ${ms(by['100']?.p99_ms)} | ${ratio(by['100']?.p50_ms)} | ${rest}`,
        );
      };
      const twoQps = ours.two_threads_by_k?.['100']?.qps;
      const size = (ours.index_bytes / 2 ** 20).toFixed(0);
      const built = ours.build_s === null ? 'cached' : ours.build_s.toFixed(1);
      row(
        '**ours**, block-max',
        ours.by_k,
        `${twoQps === undefined ? '—' : twoQps.toFixed(0)} | — | — | ${size} | ${built} |`,
      );
      if (ours.exhaustive_by_k) row('ours, exhaustive', ours.exhaustive_by_k, '— | — | — | — | — |');
      if (ours.two_threads_by_k) row('ours, 2 threads a query', ours.two_threads_by_k, '— | — | — | — | — |');
      for (const [peer, p] of Object.entries(peers)) {
        const q2 = p.by_k['100']?.qps_2_threads;
        row(
          peer,
          p.by_k,
          `${q2 === undefined ? '—' : q2.toFixed(0)} | ${p.overlap10.toFixed(3)} | ${p.ndcg10 === undefined ? '—' : p.ndcg10.toFixed(3)} | ${(p.index_bytes / 2 ** 20).toFixed(0)} | ${p.build_s.toFixed(1)} |`,
        );
      }
    }
    runs.push(
      `${passages}: ${(r.date ?? '').slice(0, 10)} at ${r.commit ?? 'unknown'}, [json](bench/results/${name}.json)`,
    );
  }
  lines.push(
    '',
    '| passages | our build s | our BM25 files MiB | our resident memory at ready, MiB |',
    '| --- | --- | --- | --- |',
  );
  for (const name of present) {
    const r = results[name] as Result;
    const n = (r['passages'] as number | undefined) ?? 1_232_684;
    const first = ((r['results'] as Array<Record<string, unknown>>) ?? [])[0]?.['ours'] as
      { index_bytes: number; build_s: number | null; rss_ready_mib?: number } | undefined;
    if (!first) continue;
    lines.push(
      `| ${(n / 1e6).toFixed(n >= 1e7 ? 0 : 2)}M | ${first.build_s === null ? 'cached' : first.build_s.toFixed(0)} | ${(first.index_bytes / 2 ** 20).toFixed(0)} | ${first.rss_ready_mib === undefined ? '—' : first.rss_ready_mib.toFixed(0)} |`,
    );
  }
  lines.push('', `Runs: ${runs.join('; ')}.`);
  return lines.join('\n');
}

/** How the scaled-up text compares with the real text it came from. */
export function renderScaleCorpus(results: Record<string, Result>): string {
  const names = Object.keys(results)
    .filter((n) => n.startsWith('scale-corpus-'))
    .sort((a, b) => Number(a.slice(13)) - Number(b.slice(13)));
  if (names.length === 0) return '_No results yet: run `node dist/bench/scale-corpus.js`._';
  const lines = [
    '| corpus | text | passages compared | words p10 / p50 / p90 | terms with df 1 | df 2–9 | df 10–99 | df 100–999 | df 1,000+ | df of the 1,000 commonest words, correlation | mean \\|log df ratio\\| | pair lift of 200 common words, correlation |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const runs: string[] = [];
  for (const name of names) {
    const r = results[name] as Result;
    const label = `${((r['passages'] as number) / 1e6).toFixed(2)}M`;
    const agree = r['agreement'] as {
      commonDfCorrelation: number;
      commonDfMeanAbsRatio: number;
      pairLiftCorrelation: number;
    } | null;
    for (const [what, side] of [
      ['real', r['real']],
      ['re-cut copy', r['synthetic']],
    ] as const) {
      if (!side) continue;
      const t = side as { passages: number; words: Record<string, number>; vocabulary: Record<string, number> };
      const v = t.vocabulary;
      const big = (v['df 1000-9999'] ?? 0) + (v['df 10000+'] ?? 0);
      const tail =
        what === 'real' || !agree
          ? '— | — | — |'
          : `${agree.commonDfCorrelation.toFixed(5)} | ${agree.commonDfMeanAbsRatio.toFixed(3)} | ${agree.pairLiftCorrelation.toFixed(4)} |`;
      lines.push(
        `| ${label} | ${what} | ${t.passages.toLocaleString('en-US')} | ${t.words['p10']} / ${t.words['p50']} / ${t.words['p90']} | ${(v['df 1-1'] ?? 0).toLocaleString('en-US')} | ${(v['df 2-9'] ?? 0).toLocaleString('en-US')} | ${(v['df 10-99'] ?? 0).toLocaleString('en-US')} | ${(v['df 100-999'] ?? 0).toLocaleString('en-US')} | ${big.toLocaleString('en-US')} | ${tail}`,
      );
    }
    runs.push(
      `${label}: ${(r.date ?? '').slice(0, 10)} at ${r.commit ?? 'unknown'}, [json](bench/results/${name}.json)`,
    );
  }
  lines.push('', `Runs: ${runs.join('; ')}.`);
  return lines.join('\n');
}

/** A server's index size on disk and build time, as a side-by-side result records them ('—' where not given). */
function indexCells(s: Record<string, unknown>): string {
  const mib = s['index_mib'];
  const build = s['build_s'];
  return `${typeof mib === 'number' ? mib.toFixed(mib < 10 ? 1 : 0) : '—'} | ${typeof build === 'number' ? build.toFixed(1) : '—'}`;
}

/** The seed stack's servers beside ours under the same load (bench/side-by-side.ts). */
export function renderSideBySide(results: Record<string, Result>): string {
  const names = Object.keys(results)
    .filter((n) => n.startsWith('side-by-side-'))
    .sort();
  if (names.length === 0) return '_No results yet: run `node dist/bench/side-by-side.js` (see its header)._';
  const lines = [
    '| run | server | clients | QPS | p50 ms | p99 ms | errors | QPS ÷ first server’s | first answer after launch, s | resident MiB | index MiB on disk | build s | top-3 agreement with the first server |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const runs: string[] = [];
  for (const name of names) {
    const r = results[name] as Result;
    const servers = (r['servers'] as Array<Record<string, unknown>>) ?? [];
    const first = servers[0]?.['load'] as Record<string, { rps: number }> | undefined;
    for (const s of servers) {
      const load = s['load'] as Record<
        string,
        { rps: number; p50ms: number; p99ms: number; non2xx: number; socketErrors: number }
      >;
      for (const [c, w] of Object.entries(load)) {
        const base = first?.[c]?.rps;
        lines.push(
          `| ${name.slice(13)} | ${String(s['name'])} | ${c} | ${w.rps.toFixed(0)} | ${w.p50ms.toFixed(1)} | ${w.p99ms.toFixed(1)} | ${w.non2xx + w.socketErrors} | ${base ? `${(w.rps / base).toFixed(2)}×` : '—'} | ${s['first_answer_s'] === null ? '—' : (s['first_answer_s'] as number).toFixed(1)} | ${s['rss_mib'] === null ? '—' : (s['rss_mib'] as number).toFixed(0)} | ${indexCells(s)} | ${(s['agreement_top3'] as number).toFixed(3)} |`,
        );
      }
    }
    runs.push(
      `${name.slice(13)}: ${(r.date ?? '').slice(0, 10)} at ${r.commit ?? 'unknown'}, [json](bench/results/${name}.json)`,
    );
  }
  lines.push('', `Runs: ${runs.join('; ')}.`);
  return lines.join('\n');
}

/** The OpenSearch backend beside local files (engine-agreement.ts) and under a node's loss (engine-failover.ts). */
export function renderEngine(results: Record<string, Result>): string {
  const out: string[] = [];
  const a = results['engine-agreement'];
  if (a) {
    out.push(
      '| data set | chunks | mode | overlap@10 | R@5 local | R@5 engine | ms/query local | ms/query engine |',
      '| --- | --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const d of (a['datasets'] as Array<Record<string, unknown>>) ?? []) {
      const modes = d['modes'] as Record<string, Record<string, unknown>>;
      for (const [mode, r] of Object.entries(modes)) {
        const local = r['local'] as Record<string, number>;
        const engine = r['engine'] as Record<string, number>;
        out.push(
          `| ${String(d['dataset'])} | ${String(d['chunks'])} | ${mode} | ${(r['overlap10'] as number).toFixed(3)} | ${(local['R@5'] ?? NaN).toFixed(4)} | ${(engine['R@5'] ?? NaN).toFixed(4)} | ${(r['localMsPerQuery'] as number).toFixed(1)} | ${(r['engineMsPerQuery'] as number).toFixed(1)} |`,
        );
      }
    }
    out.push(
      '',
      `${String(a['engine'])}; model ${String(a['model'])}. ${(a.date ?? '').slice(0, 10)} at ${a.commit ?? 'unknown'}, [json](bench/results/engine-agreement.json).`,
    );
  }
  const f = results['engine-failover'];
  if (f) {
    type Stretch = { seconds: number; qps: number; p50Ms: number; p99Ms: number; maxMs: number; errors: number };
    const row = (label: string, s: Stretch) =>
      `| ${label} | ${s.seconds.toFixed(0)} | ${s.qps.toFixed(0)} | ${s.p50Ms.toFixed(0)} | ${s.p99Ms.toFixed(0)} | ${s.maxMs.toFixed(0)} | ${s.errors} |`;
    if (out.length > 0) out.push('');
    out.push(
      '| stretch | seconds | QPS | p50 ms | p99 ms | slowest ms | errors |',
      '| --- | --- | --- | --- | --- | --- | --- |',
      row('embedded (local files), reference', f['embedded'] as Stretch),
      row('engine, before the kill', f['before'] as Stretch),
      row('engine, first 10 s after the kill', f['firstTenSeconds'] as Stretch),
      row('engine, the rest on two nodes', f['rest'] as Stretch),
      ...(f['back']
        ? [
            row('engine, node restarting', f['restarting'] as Stretch),
            row('engine, three nodes again (green)', f['back'] as Stretch),
          ]
        : []),
      '',
      `${String(f['clients'])} clients, hybrid top-5 on ${String(f['dataset'])} (${String(f['chunks'])} chunks, ${String(f['model'])}); ${String(f['engine'])}; killed ${String(f['killed'])}. ` +
        `Longest stretch with no answer: ${(f['longestSilenceMs'] as number).toFixed(0)} ms; throughput back to 80% of the steady rate (3-second mean) ${f['recoveredAfterS'] === null ? 'not within the run' : `after ${String(f['recoveredAfterS'])} s`}; ` +
        `${f['greenAfterRestartS'] !== undefined ? `Restarted on its data, the node rejoined and the cluster was green after ${(f['greenAfterRestartS'] as number).toFixed(1)} s. ` : ''}` +
        `Cluster at the end: ${String((f['clusterAfter'] as { status: string }).status)}, ${String((f['clusterAfter'] as { nodes: number }).nodes)} nodes, ${String(f['chunksAfter'])} chunks. ` +
        `Server resident memory: ${(f['engineServerRssMiB'] as number).toFixed(0)} MiB on the engine, ${(f['embedded'] as { rssMiB: number }).rssMiB.toFixed(0)} MiB embedded. ` +
        `${(f.date ?? '').slice(0, 10)} at ${f.commit ?? 'unknown'}, [json](bench/results/engine-failover.json).`,
    );
  }
  return out.length > 0
    ? out.join('\n')
    : '_No results yet: run `node dist/bench/engine-agreement.js` and `engine-failover.js`._';
}

/**
 * MCP servers under the same SSE load and judged on the same queries
 * (bench/mcp-side-by-side.ts).
 */
export function renderMcpSideBySide(results: Record<string, Result>): string {
  const names = Object.keys(results)
    .filter((n) => n.startsWith('mcp-side-by-side-'))
    .sort();
  if (names.length === 0) return '_No results yet: run `node dist/bench/mcp-side-by-side.js` (see its header)._';
  type Load = { qps: number; p50ms: number; p99ms: number; errors: number };
  const lines = [
    '| data set | server | clients | QPS | p50 ms | p99 ms | errors | QPS ÷ first server’s | R@5 | top-5 agreement with the first server | resident MiB | first answer, s | index MiB on disk | build s |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const runs: string[] = [];
  for (const name of names) {
    const r = results[name] as Result;
    const servers = (r['servers'] as Array<Record<string, unknown>>) ?? [];
    const first = servers[0]?.['load'] as Record<string, Load> | undefined;
    for (const s of servers) {
      const load = s['load'] as Record<string, Load>;
      const r5 = ((s['quality'] as Record<string, number>)['R@5'] ?? NaN).toFixed(4);
      const rss = s['rss_mib'] === null ? '—' : (s['rss_mib'] as number).toFixed(0);
      const firstS = s['first_answer_s'] === null ? '—' : (s['first_answer_s'] as number).toFixed(1);
      const levels = Object.keys(load).sort((a, b) => Number(a) - Number(b));
      for (const c of levels) {
        const w = load[c] as Load;
        const base = first?.[c]?.qps;
        lines.push(
          `| ${String(r['dataset'])} | ${String(s['name'])} | ${c} | ${w.qps.toFixed(1)} | ${w.p50ms.toFixed(1)} | ${w.p99ms.toFixed(1)} | ${w.errors} | ${base ? `${(w.qps / base).toFixed(3)}×` : '—'} | ${r5} | ${(s['agreement_top5'] as number).toFixed(3)} | ${rss} | ${firstS} | ${indexCells(s)} |`,
        );
      }
    }
    runs.push(
      `${name.slice(17)}: ${(r.date ?? '').slice(0, 10)} at ${r.commit ?? 'unknown'}, [json](bench/results/${name}.json)`,
    );
  }
  lines.push('', `Runs: ${runs.join('; ')}.`);
  return lines.join('\n');
}

/**
 * Ours against each peer of every side-by-side run (REST and MCP), as
 * ratios from the same run, beside the seed-stack issue's targets: ≥ 5× the
 * QPS at 256 clients, ≤ 1/3 of the memory, a first answer ≥ 10× sooner, and
 * quality equal or better. `short`: README's table.
 */
export function renderSeedRatios(results: Record<string, Result>, short: boolean): string {
  type Server = Record<string, unknown>;
  const qpsOf = (s: Server): number => {
    const load = s['load'] as Record<string, { rps?: number; qps?: number }>;
    const top = Object.keys(load).sort((a, b) => Number(b) - Number(a))[0] as string;
    return load[top]?.rps ?? load[top]?.qps ?? NaN;
  };
  const errorsOf = (s: Server): number => {
    const load = s['load'] as Record<string, { non2xx?: number; socketErrors?: number; errors?: number }>;
    return Object.values(load).reduce((n, w) => n + (w.errors ?? (w.non2xx ?? 0) + (w.socketErrors ?? 0)), 0);
  };
  const num = (v: unknown): number => (typeof v === 'number' ? v : NaN);
  const x = (v: number, digits = 1): string => (Number.isFinite(v) ? `${v.toFixed(digits)}×` : '—');
  const r5 = (s: Server): string => {
    const v = (s['quality'] as Record<string, number> | undefined)?.['R@5'];
    return v === undefined ? '—' : v.toFixed(4);
  };
  const runs = Object.keys(results)
    .filter((n) => n.startsWith('side-by-side-') || n.startsWith('mcp-side-by-side-'))
    .sort();
  if (runs.length === 0) return '_No side-by-side results yet._';
  const lines = short
    ? [
        '| run | peer, same run | QPS at 256 clients, ours ÷ peer | memory, peer ÷ ours | first answer, peer ÷ ours | R@5 ours | R@5 peer |',
        '| --- | --- | --- | --- | --- | --- | --- |',
      ]
    : [
        '| run | peer, same run | QPS at 256 clients, ours ÷ peer’s (target ≥ 5×) | errors, ours | errors, peer | resident memory, peer’s ÷ ours (≥ 3×) | time to first answer, peer’s ÷ ours (≥ 10×) | index on disk, peer’s ÷ ours | build time, peer’s ÷ ours | R@5 ours | R@5 peer | targets missed |',
        '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      ];
  let allErrors = 0;
  for (const name of runs) {
    const r = results[name] as Result;
    const [ours, ...peers] = (r['servers'] as Server[]) ?? [];
    if (!ours) continue;
    allErrors += errorsOf(ours);
    const label = name.startsWith('mcp-') ? `${String(r['dataset'])}, MCP` : name.slice(13);
    for (const p of peers) {
      allErrors += errorsOf(p);
      const ratios = {
        qps: qpsOf(ours) / qpsOf(p),
        mem: num(p['rss_mib']) / num(ours['rss_mib']),
        first: num(p['first_answer_s']) / num(ours['first_answer_s']),
      };
      const ourR5 = (ours['quality'] as Record<string, number> | undefined)?.['R@5'];
      const peerR5 = (p['quality'] as Record<string, number> | undefined)?.['R@5'];
      const missed = [
        ratios.qps < 5 ? `QPS ${x(ratios.qps)} of 5×` : '',
        ratios.mem < 3 ? `memory ${x(ratios.mem)} of 3×` : '',
        ratios.first < 10 ? `first answer ${x(ratios.first)} of 10×` : '',
        ourR5 !== undefined && peerR5 !== undefined && ourR5 < peerR5 ? 'quality' : '',
        errorsOf(ours) > 0 ? 'errors' : '',
      ].filter(Boolean);
      const cells = {
        qps: x(ratios.qps),
        mem: x(ratios.mem),
        first: x(ratios.first),
        index: x(num(p['index_mib']) / num(ours['index_mib'])),
        build: x(num(p['build_s']) / num(ours['build_s'])),
      };
      lines.push(
        short
          ? `| ${label} | ${String(p['name'])} | ${cells.qps} | ${cells.mem} | ${cells.first} | ${r5(ours)} | ${r5(p)} |`
          : `| ${label} | ${String(p['name'])} | ${cells.qps} | ${errorsOf(ours)} | ${errorsOf(p)} | ${cells.mem} | ${cells.first} | ${cells.index} | ${cells.build} | ${r5(ours)} | ${r5(p)} | ${missed.length > 0 ? missed.join('; ') : 'none'} |`,
      );
    }
  }
  lines.push(
    '',
    allErrors === 0
      ? 'Every server answered every request at every load level (0 errors).'
      : `Errors across all runs and load levels: ${allErrors} (per server in the tables below).`,
  );
  return lines.join('\n');
}

/** Our dense arm against faiss-cpu from PyPI on the same vectors (bench/faiss-cpu.ts): its rows as they are. */
export function renderFaissCpu(results: Record<string, Result>): string {
  const r = results['faiss-cpu'];
  if (!r) return '_No results yet: run `node dist/bench/faiss-cpu.js` (see its header)._';
  const table = rows(r);
  const cols = [...new Set(table.flatMap((row) => Object.keys(row)))];
  return [
    `| ${cols.join(' | ')} |`,
    `| ${cols.map(() => '---').join(' | ')} |`,
    ...table.map(
      (row) => `| ${cols.map((c) => (typeof row[c] === 'number' ? String(row[c]) : (row[c] ?? '—'))).join(' | ')} |`,
    ),
    '',
    `${String(r['faiss'])}; ${(r.date ?? '').slice(0, 10)} at ${r.commit ?? 'unknown'}, [json](bench/results/faiss-cpu.json).`,
  ].join('\n');
}

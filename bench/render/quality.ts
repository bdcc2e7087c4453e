/** Retrieval quality with real models (bench/suites/quality-real.ts): BENCHMARKS.md's table and README's. */
import { DEFAULTS } from '../../src/config.js';
import { named, type Result, type Results, runLine } from './lib.js';

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

/** README's narrow table: the data sets' names without their query counts. */
const README_NAMES: Record<string, string> = {
  '2wiki': '2WikiMultiHopQA (supporting ids)',
  'graphrag-medical': 'GraphRAG-Bench medical',
  'graphrag-novel': 'GraphRAG-Bench novel',
  multihop: 'MultiHop-RAG **surrogate**',
};

/** The same, short, for BENCHMARKS.md's wide tables (the legend under them names them in full). */
const SHORT_NAMES: Record<string, string> = {
  '2wiki': '2Wiki',
  'graphrag-medical': 'medical',
  'graphrag-novel': 'novel',
  multihop: 'MultiHop (surrogate)',
};
const LEGEND = Object.keys(SHORT_NAMES)
  .map((k) => `${SHORT_NAMES[k]}: ${DATASET_NAMES[k]}`)
  .join('; ');

/** Each model's results under its formats' conventions (not the runs with a forced `--dense-text`). */
function qualityResults(results: Results): Array<[string, Result]> {
  return named(results, 'quality').filter(([name]) => !name.includes('-text-'));
}

/** "graphrag-novel 2026-11-25 at c34fe5c+, …": when the data sets a merged result kept were measured. */
function keptRuns(r: Result): string {
  return ((r['datasets'] as Array<QualityDataset & { ran?: { date?: string; commit?: string } }>) ?? [])
    .filter((d) => d.ran)
    .map((d) => `${d.dataset} ${(d.ran?.date ?? '').slice(0, 10)} at ${d.ran?.commit ?? 'unknown'}`)
    .join(', ');
}

/**
 * The dense arm under each text rule (`--dense-text`), every data set, one
 * model: what decided each format's convention.
 */
export function renderDenseText(results: Results): string {
  const runs = named(results, 'quality').filter(([name]) => name.includes('-text-'));
  if (runs.length === 0) return '_No results yet: run `npm run bench -- quality-real --model M --dense-text RULE`._';
  const byRule = (rule: string): Result | undefined => runs.find(([, r]) => r['denseText'] === rule)?.[1];
  const from = byRule('contents');
  const to = byRule('title-body');
  if (!from || !to) return '_Both rules are needed: `--dense-text contents` and `--dense-text title-body`._';
  const lines = [
    `${String(from['model'])}, the stored \`"Title"\\nbody\` → \`Title body\`:`,
    '',
    '| data set (chunks) | dense R@5 | dense nDCG@10 | hybrid R@5 | hybrid nDCG@10 |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const d of (from['datasets'] as QualityDataset[]) ?? []) {
    const e = ((to['datasets'] as QualityDataset[]) ?? []).find((x) => x.dataset === d.dataset);
    const cell = (mode: string, metric: string): string =>
      `${m(
        d.rows.find((x) => x.mode === mode),
        metric,
      )} → ${m(
        e?.rows.find((x) => x.mode === mode),
        metric,
      )}`;
    lines.push(
      `| ${SHORT_NAMES[d.dataset] ?? d.dataset} (${d.chunks}) | ${cell('dense', 'R@5')} | ${cell('dense', 'nDCG@10')} | ${cell('hybrid', 'R@5')} | ${cell('hybrid', 'nDCG@10')} |`,
    );
  }
  lines.push('', ...runs.map(([name, r]) => `- ${String(r['denseText'])}: ${runLine(name, r)}`));
  return lines.join('\n');
}

function m(row: QualityRow | undefined, metric: string): string {
  const v = row?.metrics[metric];
  return typeof v === 'number' ? v.toFixed(3) : '—';
}

/**
 * One row per model and data set: each arm on every query, then the held-out
 * half (odd-numbered queries) for the arms, the default fusion, the textbook
 * RRF (k 60, equal weights, pools of 100) and the fusion tuned on the even half.
 */
export function renderQuality(results: Results): string {
  const models = qualityResults(results);
  if (models.length === 0) return '_No real-model results yet: run `npm run bench -- quality-real`._';
  const out = [
    '| model | data set (chunks) | R@5: BM25 / dense / hybrid | nDCG@10: BM25 / dense / hybrid | held-out R@5: BM25 / dense / hybrid / k 60 | held-out R@5, tuned (k, dense ×, pools) |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  let below = 0;
  for (const [, r] of models) {
    for (const d of (r['datasets'] as Array<QualityDataset & { grid?: GridPoint[] }>) ?? []) {
      const all = (mode: string): QualityRow | undefined => d.rows.find((x) => x.mode === mode);
      const held = (mode: string): QualityRow | undefined => d.tuned.heldOut.find((x) => x.mode === mode);
      const three = (metric: string, f: (mode: string) => QualityRow | undefined): string =>
        ['bm25', 'dense', 'hybrid'].map((mode) => m(f(mode), metric)).join(' / ');
      const classic = d.grid?.find((g) => g.k === 60 && g.denseWeight === 1 && g.depth === 100);
      const arms = Math.max(held('bm25')?.metrics['R@5'] ?? 0, held('dense')?.metrics['R@5'] ?? 0);
      const isBelow = (held('hybrid')?.metrics['R@5'] ?? 1) < arms;
      if (isBelow) below++;
      out.push(
        `| ${String(r['model'])} | ${SHORT_NAMES[d.dataset] ?? d.dataset} (${d.chunks}) | ${three('R@5', all)} | ${three('nDCG@10', all)} | ${three('R@5', held)}${isBelow ? ' †' : ''} / ${classic ? classic.heldOut.toFixed(3) : '—'} | ${m(held('hybrid-tuned'), 'R@5')} (${d.tuned.k}, ${d.tuned.denseWeight}, ${d.tuned.depth}) |`,
      );
    }
  }
  out.push(
    '',
    `${LEGEND}. † hybrid below the better arm on the held-out half (${below} of ${out.length - 2}).`,
    '',
    'Models:',
    '',
  );
  for (const [name, r] of models) {
    const merged = r['merged'] ? ` (${String(r['merged'])}: ${keptRuns(r)})` : '';
    out.push(`- **${String(r['model'])}**: ${String(r['about']).split(': ')[0]}. ${runLine(name, r)}${merged}.`);
  }
  const common = commonFusion(results);
  if (common) out.push('', common);
  const int8 = renderInt8Loss(results);
  if (int8) out.push('', int8);
  return out.join('\n');
}

/** The bar int8 must clear to be the CPU default: no quality figure below fp32's by more than this. */
const INT8_BAR = 0.005;

/**
 * Each model that has an int8 run beside its fp32 one: the largest losses of the dense and hybrid
 * arms (R@5 and nDCG@10, every data set) against the bar for int8 as the default.
 */
function renderInt8Loss(results: Results): string | undefined {
  const models = qualityResults(results);
  const lines: string[] = [];
  for (const [name, r8] of models.filter(([n]) => n.endsWith('-int8'))) {
    const r32 = models.find(([n]) => n === name.replace(/-int8$/, ''))?.[1];
    if (!r32) continue;
    const losses: Array<{ d: number; where: string }> = [];
    for (const d8 of (r8['datasets'] as QualityDataset[]) ?? []) {
      const d32 = ((r32['datasets'] as QualityDataset[]) ?? []).find((x) => x.dataset === d8.dataset);
      for (const mode of ['dense', 'hybrid']) {
        for (const metric of ['R@5', 'nDCG@10']) {
          const a = d32?.rows.find((x) => x.mode === mode)?.metrics[metric];
          const b = d8.rows.find((x) => x.mode === mode)?.metrics[metric];
          if (typeof a === 'number' && typeof b === 'number') {
            losses.push({ d: b - a, where: `${SHORT_NAMES[d8.dataset] ?? d8.dataset} ${mode} ${metric}` });
          }
        }
      }
    }
    if (losses.length === 0) continue;
    losses.sort((x, y) => x.d - y.d);
    const worst = losses.slice(0, 3).map((l) => `${l.where} ${l.d >= 0 ? '+' : '−'}${Math.abs(l.d).toFixed(4)}`);
    const fails = losses.filter((l) => l.d < -INT8_BAR).length;
    lines.push(
      `| ${String(r32['model'])} | ${worst.join('; ')} | ${fails === 0 ? 'yes' : `no (${fails} of ${losses.length} beyond it)`} |`,
    );
  }
  if (lines.length === 0) return undefined;
  return [
    `int8 against fp32, the same model: the largest losses of the dense and hybrid arms (int8 − fp32). int8 becomes the CPU default for a model only if no figure loses more than ${INT8_BAR}:`,
    '',
    '| model | largest losses | within the bar |',
    '| --- | --- | --- |',
    ...lines,
  ].join('\n');
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
function commonFusion(results: Results): string | undefined {
  const sets = qualityResults(results).flatMap(([, r]) =>
    ((r['datasets'] as Array<QualityDataset & { grid?: GridPoint[] }>) ?? [])
      .filter((d) => Array.isArray(d.grid) && d.grid.length > 0)
      .map((d) => ({ model: String(r['model']), d, grid: d.grid as GridPoint[] })),
  );
  if (sets.length === 0) return undefined;
  const key = (g: Pick<GridPoint, 'k' | 'denseWeight' | 'depth'>): string => `${g.k}/${g.denseWeight}/${g.depth}`;
  const mean = new Map<string, number>();
  const heldMean = new Map<string, number>();
  for (const s of sets)
    for (const g of s.grid) {
      mean.set(key(g), (mean.get(key(g)) ?? 0) + g.tune / sets.length);
      heldMean.set(key(g), (heldMean.get(key(g)) ?? 0) + g.heldOut / sets.length);
    }
  const ranked = [...mean].sort((a, b) => b[1] - a[1]);
  const [bestKey] = ranked[0] as [string, number];
  const [nextKey, nextMean] = ranked[1] ?? ['', NaN];
  const [nk, nw, nd] = nextKey.split('/');
  const [k, w, depth] = bestKey.split('/');
  const isDefault =
    Number(k) === DEFAULTS.rrfK && Number(w) === DEFAULTS.weights.dense && Number(depth) === DEFAULTS.candidates;
  const f = (v: number | undefined): string => (v === undefined ? '—' : v.toFixed(4));
  return (
    `**One setting for all**: over ${sets.length} model and data set pairs, the grid point (RRF k ${[...new Set(sets[0]?.grid.map((g) => g.k))].join('/')}; dense × ${[...new Set(sets[0]?.grid.map((g) => g.denseWeight))].join('/')}; pools of ${[...new Set(sets[0]?.grid.map((g) => g.depth))].join('/')}) with the best mean tuning-half R@5 is RRF k ${k}, dense × ${w}, pools of ${depth} ` +
    `(mean ${f(mean.get(bestKey))}, the next best k ${nk}, dense × ${nw}, pools of ${nd} at ${f(nextMean)}; held-out ${f(heldMean.get(bestKey))}, against ${f(heldMean.get('60/1/100'))} for k 60, equal weights, pools of 100); ` +
    `${isDefault ? 'it is' : 'it is not'} the product's default (RRF k ${DEFAULTS.rrfK}, dense × ${DEFAULTS.weights.dense}, pools of ${DEFAULTS.candidates}).`
  );
}

/** README: R@5 of BM25 / dense / hybrid, one column per model (BM25 differs where chunks follow the model's window). */
export function renderReadmeQuality(results: Results): string {
  const models = qualityResults(results);
  if (models.length === 0) return '_No real-model results yet._';
  const short = (model: string): string =>
    model
      .replace(/^all-(MiniLM)-L6-v2/, '$1')
      .replace(/-en-v1\.5/, '')
      .replace(/-v2/, '')
      .replace(/-int8$/, ' int8');
  const header = ['R@5: BM25 / dense / hybrid', ...models.map(([, r]) => short(String(r['model'])))];
  const lines = [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`];
  const names = [
    ...new Set(models.flatMap(([, r]) => ((r['datasets'] as QualityDataset[]) ?? []).map((d) => d.dataset))),
  ];
  for (const name of names) {
    const cells = [README_NAMES[name] ?? name];
    for (const [, r] of models) {
      const d = ((r['datasets'] as QualityDataset[]) ?? []).find((x) => x.dataset === name);
      const v = (mode: string): string => {
        const x = d?.rows.find((row) => row.mode === mode)?.metrics['R@5'];
        return typeof x === 'number' ? x.toFixed(3) : '—';
      };
      cells.push(d ? `${v('bm25')} / ${v('dense')} / ${v('hybrid')}` : '—');
    }
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

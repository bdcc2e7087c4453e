/** Retrieval quality with real models (bench/suites/quality-real.ts): BENCHMARKS.md's table and README's. */
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

function qualityResults(results: Results): Array<[string, Result]> {
  return named(results, 'quality');
}

function m(row: QualityRow | undefined, metric: string): string {
  const v = row?.metrics[metric];
  return typeof v === 'number' ? v.toFixed(4) : '—';
}

/** One row per model and data set: each arm's figures on every query, the held-out half's beside them. */
export function renderQuality(results: Results): string {
  const models = qualityResults(results);
  if (models.length === 0) return '_No real-model results yet: run `npm run bench -- quality-real`._';
  const out = [
    '| model | data set (chunks) | R@5 BM25 | R@5 dense | R@5 hybrid | nDCG@10 BM25 | nDCG@10 dense | nDCG@10 hybrid | held-out R@5, hybrid | held-out R@5, tuned on the other half (setting) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const [, r] of models) {
    for (const d of (r['datasets'] as QualityDataset[]) ?? []) {
      const all = (mode: string): QualityRow | undefined => d.rows.find((x) => x.mode === mode);
      const held = (mode: string): QualityRow | undefined => d.tuned.heldOut.find((x) => x.mode === mode);
      out.push(
        `| ${String(r['model'])} | ${DATASET_NAMES[d.dataset] ?? d.dataset} (${d.chunks}) | ${m(all('bm25'), 'R@5')} | ${m(all('dense'), 'R@5')} | ${m(all('hybrid'), 'R@5')} | ${m(all('bm25'), 'nDCG@10')} | ${m(all('dense'), 'nDCG@10')} | ${m(all('hybrid'), 'nDCG@10')} | ${m(held('hybrid'), 'R@5')} | ${m(held('hybrid-tuned'), 'R@5')} (k ${d.tuned.k}, dense × ${d.tuned.denseWeight}, pools of ${d.tuned.depth}) |`,
      );
    }
  }
  out.push('', 'Models:', '');
  for (const [name, r] of models) out.push(`- **${String(r['model'])}**: ${String(r['about'])}. ${runLine(name, r)}.`);
  const common = commonFusion(results);
  if (common) out.push('', common);
  return out.join('\n');
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
export function renderReadmeQuality(results: Results): string {
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

import { join } from 'node:path';
import { RetrieverError } from '../errors.js';
import { openDenseArm, pushExactTop } from '../index/dense/dense-arm.js';
import { GraphFormatError, readGraphLinks } from '../index/dense/graph-file.js';
import { INDEX_FILES } from '../index/layout.js';
import type { DenseManifest } from '../index/manifest.js';
import { VectorReader } from '../index/dense/vectors-file.js';
import { TopK } from '../core/top-k.js';
import { percentile } from '../util/percentile.js';
import { createProgress } from '../util/progress.js';

export interface AnnRecallOptions {
  /** The corpus's published index directory and its dense manifest. */
  dir: string;
  dense: DenseManifest;
  queries: Float32Array[];
  /** efSearch values to try (an HNSW index). */
  efs: number[];
  /** (lists probed, candidates re-scored) to try (an IVF index); its own and larger ones when absent. */
  ivf?: Array<{ probes: number; rescore: number }>;
  k: number;
  rescoreFactor: number;
  progress: boolean;
}

export interface AnnRecallRow {
  /** The setting measured: efSearch for HNSW, `probes:rescore` for IVF. */
  setting: string;
  efSearch?: number;
  probes?: number;
  rescore?: number;
  recall: number;
  p50Ms: number;
  p99Ms: number;
}

export interface AnnRecallReport {
  queries: number;
  vectors: number;
  exactSeconds: number;
  rows: AnnRecallRow[];
  /**
   * Chunks of the graph no base-level link points to, which no efSearch can
   * return (graphs built before build-index relinked them); null when the
   * graph file's layout is not one `readGraphLinks` knows.
   */
  unreachable: number[] | null;
}

/** Rows read per block in the exhaustive pass (24 MiB of f32 at 768-d). */
const BLOCK_ROWS = 8192;

/**
 * Recall@k of the served dense path (HNSW walk, then exact re-scoring of
 * `rescoreFactor × k` candidates) against exhaustive search, on the user's own
 * vectors and query vectors, for each efSearch. The synthetic figures in
 * BENCHMARKS.md only estimate this; real e5 vectors may be easier or harder.
 */
export function measureAnnRecall(opts: AnnRecallOptions): AnnRecallReport {
  if (!opts.dense.ann) {
    throw new RetrieverError(
      'BAD_INPUT',
      `this corpus has ${opts.dense.vectors.count} chunks and is searched exactly (no HNSW graph): dense recall is 1 by construction`,
    );
  }
  const t0 = performance.now();
  const exact = exactTopK(opts);
  const exactSeconds = (performance.now() - t0) / 1000;
  const rows: AnnRecallRow[] = [];
  const ann = opts.dense.ann;
  const ivf = 'kind' in ann && ann.kind === 'ivf-rabitq' ? ann : undefined;
  const tries: Array<Omit<AnnRecallRow, 'recall' | 'p50Ms' | 'p99Ms'>> = ivf
    ? (opts.ivf ?? ivfEfforts(ivf.probes, ivf.rescore, ivf.lists)).map((x) => ({
        setting: `${x.probes}:${x.rescore}`,
        ...x,
      }))
    : opts.efs.map((ef) => ({ setting: String(ef), efSearch: ef }));
  for (const t of tries) {
    const arm = openDenseArm(opts.dir, opts.dense, 'rebuild the index', {
      mmap: true,
      ...(t.efSearch !== undefined ? { expansionSearch: t.efSearch } : {}),
      ...(t.probes !== undefined ? { probes: t.probes, rescore: t.rescore } : {}),
      rescoreFactor: opts.rescoreFactor,
    });
    try {
      // one untimed pass warms the graph pages and the JIT
      for (const q of opts.queries.slice(0, 50)) arm.search(q, opts.k);
      let hits = 0;
      const times: number[] = [];
      opts.queries.forEach((q, i) => {
        const t = performance.now();
        const got = arm.search(q, opts.k);
        times.push(performance.now() - t);
        const want = exact[i] as Set<number>;
        for (const h of got) if (want.has(h.num)) hits++;
      });
      times.sort((a, b) => a - b);
      rows.push({
        ...t,
        recall: hits / (opts.queries.length * opts.k),
        p50Ms: percentile(times, 50),
        p99Ms: percentile(times, 99),
      });
    } finally {
      arm.close();
    }
  }
  return {
    queries: opts.queries.length,
    vectors: opts.dense.vectors.count,
    exactSeconds,
    rows,
    unreachable: ivf ? [] : unreachableChunks(join(opts.dir, INDEX_FILES.ann)),
  };
}

/** An IVF index's efforts to measure: its own, then twice, four and eight times the lists and candidates. */
export function ivfEfforts(probes: number, rescore: number, lists: number): Array<{ probes: number; rescore: number }> {
  // up to 16 times: on real e5 vectors recall follows the share of lists probed, and the
  // default share is a sixteenth of what reaches 0.9 (BENCHMARKS, the IVF on real vectors)
  const out: Array<{ probes: number; rescore: number }> = [];
  for (const f of [1, 2, 4, 8, 16]) {
    const next = { probes: Math.min(lists, probes * f), rescore: rescore * Math.min(f, 4) };
    if (!out.some((x) => x.probes === next.probes && x.rescore === next.rescore)) out.push(next);
  }
  return out;
}

function unreachableChunks(graphPath: string): number[] | null {
  try {
    return readGraphLinks(graphPath).orphans;
  } catch (err) {
    if (err instanceof GraphFormatError) return null;
    throw err;
  }
}

/** Exact top-k chunk nums per query: one streaming pass over the stored vectors. */
function exactTopK(opts: AnnRecallOptions): Array<Set<number>> {
  const { dim, dtype, count } = { ...opts.dense.vectors, dim: opts.dense.encoder.dim };
  const reader = new VectorReader(join(opts.dir, INDEX_FILES.vectors), dim, dtype, count);
  const tops = opts.queries.map(() => new TopK(opts.k));
  const progress = createProgress({
    label: 'exact search',
    total: count,
    unit: 'vectors',
    enabled: opts.progress,
  });
  try {
    for (let from = 0; from < count; from += BLOCK_ROWS) {
      const n = Math.min(BLOCK_ROWS, count - from);
      const block = reader.readRange(from, n);
      // the exact arm's own selection, block by block
      opts.queries.forEach((q, qi) => pushExactTop(tops[qi] as TopK, block, dim, q, opts.k, from));
      progress.update(from + n);
    }
    progress.finish();
  } finally {
    progress.close();
    reader.close();
  }
  return tops.map((t) => new Set(t.result().map((h) => h.num)));
}

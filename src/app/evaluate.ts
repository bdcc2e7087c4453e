import { DEFAULTS } from '../config.js';
import { RetrieverError } from '../errors.js';
import { measureAnnRecall, type AnnRecallReport } from '../eval/ann-recall.js';
import { loadQueries, type EvalFormat, type EvalQuery } from '../eval/queries.js';
import { runEvalDetailed, type EvalRow } from '../eval/run-eval.js';
import { renderHtmlReport } from '../eval/html-report.js';
import { TOOL_VERSION } from '../version.js';
import type { HubConfig } from '../hub/download.js';
import type { Manifest } from '../index/manifest.js';
import { fetchPresetFile, getPreset } from '../presets/presets.js';
import { localOnly } from '../search/served-corpus.js';
import type { Retriever } from '../search/retriever.js';
import { SEARCH_MODES, type SearchMode } from '../search/types.js';
import type { Logger } from '../util/log.js';
import type { EncoderFlags } from './encoders.js';
import { openRetriever } from './open-retriever.js';

/** Depths an HTML report's curves are drawn at (up to the deepest --k, at least 10). */
const CURVE_KS = [1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50, 100];

export interface EvalSetup {
  corpus: string;
  indexDir: string;
  /** The query file; unset for a preset: its own questions (downloaded). */
  queries?: string;
  format?: EvalFormat;
  qrels?: string;
  encoder: EncoderFlags;
  hub: HubConfig;
  log: Logger;
  progress: boolean;
}

export interface EvalReport {
  rows: EvalRow[];
  /** With `html`: the self-contained report (eval/html-report.ts). */
  html?: string;
  queriesPath: string;
  format: EvalFormat;
  queryCount: number;
  seconds: number;
  manifest: Manifest;
}

/**
 * Runs a benchmark's queries through the server's own search path (the same
 * Retriever, no cache) and scores each mode: recall@k, MRR@10, nDCG@10.
 */
export async function evaluate(
  setup: EvalSetup,
  o: { modes?: string[]; ks: number[]; limit?: number; evidenceThreshold: number; html?: boolean },
): Promise<EvalReport> {
  return withRetriever(setup, async (retriever, queries, queriesPath, format) => {
    const corpus = retriever.corpus(setup.corpus);
    const modes = (o.modes ?? corpus.modes) as SearchMode[];
    for (const m of modes) {
      if (!(SEARCH_MODES as readonly string[]).includes(m))
        throw new RetrieverError('BAD_INPUT', `unknown mode "${m}" in --mode`);
      retriever.modeFor(corpus, m);
    }
    const picked = o.limit !== undefined ? queries.slice(0, o.limit) : queries;
    const dense = modes.filter((m) => m !== 'bm25');
    if (dense.length > 0 && corpus.manifest.dense) {
      // every query goes through the encoder once per dense mode (the evaluation runs without caches)
      setup.log.warn(
        `encoding ${picked.length.toLocaleString('en')} queries with ${corpus.manifest.dense.encoder.model} for each of ` +
          `${dense.join(' and ')} (${(picked.length * dense.length).toLocaleString('en')} in all), on ${setup.encoder.device}: ` +
          'this can take a while on a CPU; --limit N or --mode bm25 runs fewer',
      );
    }
    const t0 = performance.now();
    // a report's curves need points at more depths than the table's cut-offs
    const ks = o.html
      ? [...new Set([...CURVE_KS.filter((k) => k <= Math.max(10, ...o.ks)), ...o.ks])].sort((a, b) => a - b)
      : o.ks;
    const { rows, details } = await runEvalDetailed(picked, {
      retriever,
      corpus: setup.corpus,
      modes,
      ks,
      evidenceThreshold: o.evidenceThreshold,
      progress: setup.progress,
      curves: o.html === true,
    });
    const seconds = (performance.now() - t0) / 1000;
    const m = corpus.manifest;
    const html = o.html
      ? renderHtmlReport({
          corpus: setup.corpus,
          queriesPath,
          queryCount: picked.length,
          encoder: m.dense ? `${m.dense.encoder.model} (${m.dense.encoder.variant})` : null,
          builtAt: m.built_at,
          rows,
          details,
          ks,
          generatedAt: new Date().toISOString(),
          version: TOOL_VERSION,
        })
      : undefined;
    return { rows, queriesPath, format, queryCount: picked.length, seconds, manifest: m, ...(html ? { html } : {}) };
  });
}

/** The dense index's recall@k against exhaustive search on these queries' vectors, per efSearch. */
export async function evaluateAnnRecall(
  setup: EvalSetup,
  o: {
    efs: number[];
    ivf?: Array<{ probes: number; rescore: number }>;
    k: number;
    rescoreFactor: number;
    limit: number;
  },
): Promise<AnnRecallReport> {
  return withRetriever(setup, async (retriever, queries) => {
    const corpus = retriever.corpus(setup.corpus);
    const dense = corpus.manifest.dense;
    if (!dense) {
      throw new RetrieverError(
        'MODE_UNAVAILABLE',
        `corpus ${setup.corpus} has no dense index, so --ann-recall has nothing to measure (rebuild without --no-dense)`,
      );
    }
    const texts = queries.slice(0, o.limit).map((q) => q.text);
    const vectors = await retriever.embedQueries(setup.corpus, texts);
    const { dir } = localOnly(corpus, 'eval --ann-recall');
    return measureAnnRecall({ dir, dense, queries: vectors, progress: setup.progress, ...o });
  });
}

async function withRetriever<T>(
  setup: EvalSetup,
  work: (r: Retriever, queries: EvalQuery[], path: string, format: EvalFormat) => Promise<T>,
): Promise<T> {
  const { path, format } = await queryFile(setup);
  const { retriever } = await openRetriever({
    corpora: [setup.corpus],
    indexDir: setup.indexDir,
    retriever: {
      topK: 10,
      maxTopK: 100,
      maxQueryChars: 1 << 20,
      candidates: DEFAULTS.candidates,
      rrfK: DEFAULTS.rrfK,
      weights: { ...DEFAULTS.weights },
      cacheSize: 0,
    },
    encoder: setup.encoder,
    hub: setup.hub,
    dense: { mmap: true, rescoreFactor: DEFAULTS.rescoreFactor },
    batching: { maxBatch: 64, maxWaitMs: 0, maxQueue: 1 << 20, cacheSize: 0 },
    bm25Threads: 0,
    verify: 'sizes',
    log: setup.log,
  });
  try {
    return await work(retriever, await loadQueries(format, path, setup.qrels), path, format);
  } finally {
    await retriever.close();
  }
}

async function queryFile(setup: EvalSetup): Promise<{ path: string; format: EvalFormat }> {
  const preset = getPreset(setup.corpus);
  let path = setup.queries;
  let format = setup.format;
  if (!path && preset?.queries) {
    path = await fetchPresetFile(preset, 'queries', setup.hub);
    format ??= preset.queries.format as EvalFormat;
  }
  if (!path || !format) {
    throw new RetrieverError(
      'BAD_INPUT',
      'eval needs --queries FILE and --format (flashrag, beir, multihop or graphrag)',
    );
  }
  return { path, format };
}

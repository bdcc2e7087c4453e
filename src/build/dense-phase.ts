import { existsSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { Encoder } from '../encoder/encoder.js';
import {
  AnnBuilder,
  defaultConnectivity,
  defaultExpansionAdd,
  defaultExpansionSearch,
  type AnnParams,
} from '../index/dense/ann.js';
import { GraphFormatError } from '../index/dense/graph-file.js';
import { VectorReader, VectorRows, VectorWriter, type VectorDtype } from '../index/dense/vectors-file.js';
import { INDEX_FILES } from '../index/layout.js';
import type { DenseManifest } from '../index/manifest.js';
import type { EncoderSource } from '../core/contracts.js';
import { ChunkStore } from '../store/chunk-store.js';
import { createProgress, formatCount, type Progress } from '../util/progress.js';
import { EMBED_LOG, EmbedLog } from './embed-log.js';
import type { Logger } from '../util/log.js';
import { AnnCheckpoint } from '../index/dense/ann-checkpoint.js';
import { buildIvf } from '../index/dense/ivf-build.js';
import { annKindFor, ivfDefaults, type IvfSettings } from '../index/dense/ivf-defaults.js';
import { importVectors, type VectorImport } from './import-vectors.js';
import { denseText, type DenseTextRule } from '../ingest/dense-text.js';
import { relinkOrphans } from '../index/dense/relink-orphans.js';
import { VectorReuse } from './vector-reuse.js';
import type { DensePhase, DensePhaseContext } from './build-index.js';

export interface DensePhaseOptions {
  encoder: Encoder;
  source: EncoderSource;
  vectorsDtype: VectorDtype;
  /**
   * Omitted connectivity / expansionAdd / expansionSearch: defaultConnectivity(chunks) /
   * defaultExpansionAdd(chunks) / defaultExpansionSearch(chunks, M).
   */
  ann: Pick<AnnParams, 'quantization'> & Partial<Omit<AnnParams, 'quantization'>>;
  /** Corpora with at most this many chunks are searched exactly and get no ANN graph. */
  exactBelow: number;
  /**
   * The ANN index of a corpus above exactBelow: an HNSW graph, an IVF index of 1-bit codes
   * (a few GB where the graph takes twenty), or `auto` (IVF above IVF_ABOVE chunks).
   */
  annKind?: 'auto' | 'hnsw' | 'ivf';
  /** IVF lists, probes and candidates re-scored; omitted: ivfDefaults(chunks). */
  ivf?: Partial<IvfSettings>;
  /** Threads for HNSW construction (0 = all cores). */
  annThreads: number;
  /** Chunks per embedding window (the resume unit); default WINDOW. */
  windowSize?: number;
  /** What the encoder sees of each chunk (ingest/dense-text.ts; default `contents`); recorded in the manifest. */
  text?: DenseTextRule;
  /** Copy published vectors instead of encoding the chunks. */
  importFrom?: VectorImport;
  /**
   * Take the vector of a chunk whose embedded text the index being replaced
   * holds, made by the same model and settings, instead of embedding it
   * again (build/vector-reuse.ts); default true.
   */
  reuse?: boolean;
  /**
   * Milliseconds between HNSW checkpoints that --resume continues from (a
   * save of wiki-18's graph writes up to 20 GB; 0 = after every batch;
   * default Infinity = never; build-index passes its --ann-checkpoint-minutes).
   */
  annCheckpointMs?: number;
  /** Rows added to the graph per call, the checkpoint granularity; default ANN_BATCH. */
  annBatch?: number;
  /** Called after each graph batch with the rows now in the graph. */
  onAnnBatch?: (rows: number) => void;
}

/**
 * Chunks are embedded in fixed windows of consecutive nums, written in
 * num order. A window is the unit of resume, and batches inside a window are
 * formed the same way every time, so a resumed build writes the same bytes an
 * uninterrupted one would.
 */
export const WINDOW = 4096;
const ANN_BATCH = 16_384;
/** Rows added per native call inside a batch: on 2 cores a few hundred milliseconds at 768 dimensions. */
const ANN_SLICE = 2048;

export function createDensePhase(opts: DensePhaseOptions): DensePhase {
  const e = opts.encoder;
  return {
    counter: e.tokenCounter,
    fingerprint: JSON.stringify({
      ...e.settings,
      dtype: opts.vectorsDtype,
      window: opts.windowSize ?? WINDOW,
      import: opts.importFrom?.path ?? null,
      text: opts.text ?? 'contents',
    }),
    run: (ctx) => runDense(opts, ctx),
  };
}

async function runDense(
  opts: DensePhaseOptions,
  ctx: DensePhaseContext,
): Promise<{ manifest: DenseManifest; files: string[] }> {
  const enc = opts.encoder;
  const vectorsPath = join(ctx.dir, INDEX_FILES.vectors);
  if (opts.importFrom) {
    const writer = new VectorWriter(vectorsPath, enc.dim, opts.vectorsDtype, ctx.resume);
    try {
      if (writer.count > 0) ctx.log.info(`resume: ${formatCount(writer.count)} vectors already imported`);
      await importVectors(opts.importFrom, enc, writer, ctx.chunkCount, ctx.storePath, ctx.log, ctx.progress);
    } finally {
      writer.close();
    }
  } else await embedChunks(opts, ctx, vectorsPath);
  ctx.signal?.throwIfAborted();

  const files: string[] = [INDEX_FILES.vectors];
  const annPath = join(ctx.dir, INDEX_FILES.ann);
  rmSync(annPath, { force: true });
  let ann: DenseManifest['ann'] = null;
  const ivfPath = join(ctx.dir, INDEX_FILES.ivf);
  if (ctx.chunkCount > opts.exactBelow && annKindFor(opts.annKind ?? 'auto', ctx.chunkCount) === 'ivf') {
    AnnCheckpoint.removeFrom(ctx.dir);
    const s = { ...ivfDefaults(ctx.chunkCount), ...opts.ivf };
    await buildIvfFile(opts, s, vectorsPath, ctx, ivfPath);
    files.push(INDEX_FILES.ivf);
    ann = {
      library: 'retriever-mcp',
      kind: 'ivf-rabitq',
      metric: 'cos',
      lists: Math.min(s.lists, ctx.chunkCount),
      bits: 1,
      probes: s.probes,
      rescore: s.rescore,
    };
  } else if (ctx.chunkCount > opts.exactBelow) {
    rmSync(ivfPath, { force: true });
    const connectivity = opts.ann.connectivity ?? defaultConnectivity(ctx.chunkCount);
    const params: AnnParams = {
      ...opts.ann,
      connectivity,
      expansionAdd: opts.ann.expansionAdd ?? defaultExpansionAdd(ctx.chunkCount),
      expansionSearch: opts.ann.expansionSearch ?? defaultExpansionSearch(ctx.chunkCount, connectivity),
    };
    await buildAnn(opts, params, vectorsPath, ctx, annPath);
    files.push(INDEX_FILES.ann);
    ann = {
      library: 'usearch',
      metric: 'cos',
      quantization: params.quantization,
      connectivity: params.connectivity,
      expansion_add: params.expansionAdd,
      expansion_search: params.expansionSearch,
    };
  } else {
    rmSync(ivfPath, { force: true });
    AnnCheckpoint.removeFrom(ctx.dir); // from an interrupted build that made a graph
    ctx.log.info(
      `${formatCount(ctx.chunkCount)} chunks ≤ --exact-below ${formatCount(opts.exactBelow)}: dense search will be exact, no ANN graph`,
    );
  }
  const s = enc.settings;
  return {
    manifest: {
      encoder: {
        id: enc.id,
        model: s.model,
        variant: s.variant,
        model_sha256: s.modelSha256,
        tokenizer_sha256: s.tokenizerSha256,
        dim: s.dim,
        query_prefix: s.queryPrefix,
        passage_prefix: s.passagePrefix,
        pooling: s.pooling,
        normalize: s.normalize,
        max_length: s.maxLength,
        source: opts.source,
      },
      vectors: { dtype: opts.vectorsDtype, count: ctx.chunkCount },
      text: opts.importFrom ? 'contents' : (opts.text ?? 'contents'),
      ann,
    },
    files,
  };
}

/**
 * Embeds every chunk into `vectorsPath`, window by window (WINDOW consecutive nums, the unit the
 * encoder plans batches over), each batch written and logged the moment it is done (embed-log.ts):
 * a stop loses the batch in flight, and a resumed build skips every logged batch of the same
 * plan, so it writes the bytes an uninterrupted build would. Vectors the previous index holds
 * for the same text are re-used (vector-reuse.ts).
 */
async function embedChunks(opts: DensePhaseOptions, ctx: DensePhaseContext, vectorsPath: string): Promise<void> {
  const enc = opts.encoder;
  const W = opts.windowSize ?? WINDOW;
  const logPath = join(ctx.dir, EMBED_LOG);
  const legacy = ctx.resume && !existsSync(logPath);
  if (!ctx.resume) rmSync(logPath, { force: true });
  const rows = new VectorRows(vectorsPath, enc.dim, opts.vectorsDtype, ctx.resume);
  const log = new EmbedLog(logPath);
  // a partial build of a version that kept whole windows only: its whole windows are done
  if (legacy) for (let at = 0; at + W <= Math.min(rows.rowsOnDisk, ctx.chunkCount); at += W) log.markWindow(at);
  const windows = Math.ceil(ctx.chunkCount / W);
  let kept = 0;
  for (let w = 0; w < windows; w++) if (log.windowDone(w * W)) kept += Math.min(W, ctx.chunkCount - w * W);
  if (kept > 0 || log.batchesLogged > 0) {
    ctx.log.info(
      `resume: ${formatCount(kept + log.rowsInBatches)} of ${formatCount(ctx.chunkCount)} chunk vectors kept from the interrupted build`,
    );
  }
  const reuse =
    opts.reuse !== false && ctx.previous && kept < ctx.chunkCount
      ? VectorReuse.open(
          ctx.previous,
          { settings: enc.settings, dim: enc.dim, dtype: opts.vectorsDtype, text: opts.text ?? 'contents' },
          ctx.log,
        )
      : undefined;
  const store = new ChunkStore(ctx.storePath);
  const progress = createProgress({
    label: `embed ${enc.settings.model}`,
    total: ctx.chunkCount,
    unit: 'chunks',
    enabled: ctx.progress,
    initial: kept,
  });
  try {
    const windowAt = (start: number): string[] =>
      store
        .passagesRange(start, Math.min(ctx.chunkCount, start + W))
        .map((p) => denseText(opts.text ?? 'contents', p.contents, p.bodyStart));
    let done = kept;
    for (let start = 0; start < ctx.chunkCount; start += W) {
      if (log.windowDone(start)) continue;
      const texts = windowAt(start);
      const base = done;
      const embedded = await embedWindow(enc, texts, start, rows, log, reuse, ctx.signal, progress, (n) =>
        progress.update(base + n),
      );
      log.markWindow(start);
      done = base + texts.length;
      progress.update(done);
      if (reuse) reuse.embedded += embedded;
    }
    progress.finish();
    rows.finish(ctx.chunkCount);
    if (reuse) {
      ctx.log.info(
        `re-used the vectors of ${formatCount(reuse.reused)} unchanged chunks and embedded ${formatCount(reuse.embedded)} new or changed ones`,
      );
    }
    log.remove();
  } finally {
    progress.close();
    store.close();
    reuse?.close();
    rows.close();
    log.close();
  }
}

/**
 * One window's vectors into `rows`: the previous index's for texts it holds (counted as done, not
 * in the rate), the encoder's for the rest, batch by batch, skipping batches an interrupted build
 * logged. Returns how many texts went to the encoder.
 */
async function embedWindow(
  enc: Encoder,
  texts: string[],
  start: number,
  rows: VectorRows,
  log: EmbedLog,
  reuse: VectorReuse | undefined,
  signal: AbortSignal | undefined,
  progress: Progress,
  onProgress: (done: number) => void,
): Promise<number> {
  const missing: number[] = [];
  const found: number[] = [];
  const foundVectors: Float32Array[] = [];
  texts.forEach((t, i) => {
    const v = reuse?.lookup(t);
    if (v) {
      found.push(start + i);
      foundVectors.push(v);
    } else missing.push(i);
  });
  if (found.length > 0) {
    rows.write(found, foundVectors);
    if (reuse) reuse.reused += found.length;
    progress.skip(found.length);
  }
  if (missing.length === 0) return 0;
  await enc.embedPassages(
    missing.map((i) => texts[i] as string),
    signal,
    (n) => onProgress(found.length + n),
    {
      skip: log.batchesDone(start),
      onBatch: (batch, idx, vectors) => {
        rows.write(
          Array.from(idx, (j) => start + (missing[j] as number)),
          vectors,
        );
        log.markBatch(start, batch, idx.length);
      },
    },
  );
  return missing.length;
}

async function buildIvfFile(
  opts: DensePhaseOptions,
  s: IvfSettings,
  vectorsPath: string,
  ctx: DensePhaseContext,
  ivfPath: string,
): Promise<void> {
  const reader = new VectorReader(vectorsPath, opts.encoder.dim, opts.vectorsDtype, ctx.chunkCount);
  const labels = { train: 'IVF lists (k-means)', encode: 'IVF codes', write: 'IVF file' } as const;
  let step: keyof typeof labels | undefined;
  let bar: ReturnType<typeof createProgress> | undefined;
  ctx.log.info(
    `dense index: IVF, ${formatCount(s.lists)} lists of 1-bit codes over ${formatCount(ctx.chunkCount)} vectors ` +
      `(probes ${s.probes}, ${s.rescore} candidates re-scored)`,
  );
  try {
    await buildIvf(reader, ivfPath, {
      lists: s.lists,
      threads: opts.annThreads > 0 ? opts.annThreads : availableParallelism(),
      resume: ctx.resume,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      onProgress: (at, done) => {
        if (at !== step) {
          bar?.finish();
          bar?.close();
          step = at;
          bar = createProgress({ label: labels[at], total: 1000, unit: '‰', enabled: ctx.progress });
        }
        bar?.update(Math.round(done * 1000));
      },
    });
    bar?.finish();
  } finally {
    bar?.close();
    reader.close();
  }
}

async function buildAnn(
  opts: DensePhaseOptions,
  params: AnnParams,
  vectorsPath: string,
  ctx: DensePhaseContext,
  annPath: string,
): Promise<void> {
  const dim = opts.encoder.dim;
  const checkpoint = new AnnCheckpoint(ctx.dir, {
    dim,
    connectivity: params.connectivity,
    expansionAdd: params.expansionAdd,
    quantization: params.quantization,
    vectorsDtype: opts.vectorsDtype,
  });
  const builder = startGraph(checkpoint, dim, params, ctx);
  const reader = new VectorReader(vectorsPath, dim, opts.vectorsDtype, ctx.chunkCount);
  const progress = createProgress({
    label: 'HNSW graph',
    total: ctx.chunkCount,
    unit: 'vectors',
    enabled: ctx.progress,
    initial: builder.size,
  });
  const batch = opts.annBatch ?? ANN_BATCH;
  const every = opts.annCheckpointMs ?? Infinity;
  let saved = performance.now();
  try {
    for (let start = builder.size; start < ctx.chunkCount; start += batch) {
      const n = Math.min(batch, ctx.chunkCount - start);
      // slices of a batch, with a turn of the event loop between them, so a signal stops the build
      // within one slice; a stopped build resumes from the last checkpoint
      for (let at = start; at < start + n; at += ANN_SLICE) {
        await new Promise((resolve) => setImmediate(resolve));
        ctx.signal?.throwIfAborted();
        const m = Math.min(ANN_SLICE, start + n - at);
        builder.add(at, reader.readRange(at, m), opts.annThreads);
        progress.update(at + m);
      }
      opts.onAnnBatch?.(start + n);
      if (start + n < ctx.chunkCount && performance.now() - saved >= every) {
        const s = checkpoint.save(builder);
        // shown on the bar: a log line would break a redrawn terminal line
        progress.update(start + n, `checkpoint at ${formatCount(start + n)} (${s.toFixed(0)}s)`);
        saved = performance.now();
      }
    }
    progress.finish();
    builder.save(annPath);
    checkReach(builder, annPath, reader, ctx.log);
    checkpoint.remove();
  } finally {
    progress.close();
    reader.close();
  }
}

/**
 * Relinks the nodes of the finished graph that no link reaches. A graph file
 * this reader does not understand (a USearch upgrade) is served as it is,
 * with a warning: it is a valid graph, and the build took hours.
 */
function checkReach(builder: AnnBuilder, annPath: string, reader: VectorReader, log: Logger): void {
  try {
    relinkOrphans(builder, annPath, (num) => reader.row(num), log);
  } catch (err) {
    if (!(err instanceof GraphFormatError)) throw err;
    log.warn(`cannot check the HNSW graph for unreachable nodes: ${err.message}`);
  }
}

/** The graph to extend: under --resume an interrupted build's checkpoint, else an empty graph. */
function startGraph(checkpoint: AnnCheckpoint, dim: number, params: AnnParams, ctx: DensePhaseContext): AnnBuilder {
  const resumed = ctx.resume ? checkpoint.load(params, ctx.log) : undefined;
  if (resumed) return resumed;
  checkpoint.remove();
  return new AnnBuilder(dim, params);
}

import { statSync } from 'node:fs';
import { buildIndex, type BuildOptions, type BuildSummary, type DensePhase } from '../build/build-index.js';
import { createDensePhase } from '../build/dense-phase.js';
import { CHUNK_SIZE_BY_FORMAT, DEFAULTS } from '../config.js';
import type { CorpusFormat } from '../core/contracts.js';
import { describeEncoder, modelHubFiles, openEncoder, type EncoderChoice } from '../encoder/load-encoder.js';
import { RetrieverError } from '../errors.js';
import { cachedPath, type HubConfig, type HubFile } from '../hub/download.js';
import type { Bm25Params } from '../index/bm25/scoring.js';
import { DEFAULT_QUANTIZATION, type AnnQuantization } from '../index/dense/ann.js';
import {
  fetchPresetFile,
  fetchPresetVectors,
  getPreset,
  listPresets,
  presetHubFile,
  type Preset,
} from '../presets/presets.js';
import { DEFAULT_DENSE_TEXT, type DenseTextRule } from '../ingest/dense-text.js';
import type { Logger } from '../util/log.js';
import type { FolderOptions } from '../ingest/files/walk.js';
import type { IvfSettings } from '../index/dense/ivf-defaults.js';

/** The dense arm of a build: which encoder, and how its vectors are indexed. */
export interface DenseBuildOptions {
  encoder: EncoderChoice;
  vectorsDtype: 'f32' | 'f16';
  /** Corpora of at most this many chunks are searched exactly (no graph). */
  exactBelow: number;
  /** Unset fields take the size-dependent defaults of index/dense/ann.ts. */
  ann: { connectivity?: number; expansionAdd?: number; expansionSearch?: number; quantization: AnnQuantization };
  /** Which ANN index above exactBelow (unset: auto, by size), and the IVF's settings (unset: by size). */
  annKind?: 'auto' | 'hnsw' | 'ivf';
  ivf?: Partial<IvfSettings>;
  annThreads: number;
  annCheckpointMinutes: number;
  embedWindow: number;
  /** Take unchanged chunks' vectors from the index being replaced (build/vector-reuse.ts); unset: true. */
  reuseVectors?: boolean;
  /** Import precomputed vectors instead of encoding (`importVectors` fills it for a preset). */
  vectors?: { path: string; format?: 'faiss'; spotCheck: number; minCosine: number };
  /** What the encoder sees of each chunk; unset: the input format's convention (ingest/dense-text.ts). */
  text?: DenseTextRule;
}

/** A build: a preset (`preset`), or a file of ours (`name`, `input`, `format`). */
export interface BuildCorpusOptions {
  preset?: string;
  name?: string;
  input?: string;
  format?: CorpusFormat;
  /** The `files` format: which files of the folder to read; unset: every known kind up to 64 MB. */
  folder?: FolderOptions;
  /** With a preset: download and import its published vectors instead of encoding. */
  importVectors?: boolean;
  indexDir: string;
  /** Unset: the preset's, else the format's default (config.ts CHUNK_SIZE_BY_FORMAT). */
  chunkSize?: number;
  chunkOverlap?: number;
  /** 'words' counts chunk sizes in words even when the build embeds, so chunks match a --no-dense build. */
  chunkUnit?: 'model' | 'words';
  bm25: Bm25Params;
  maxPostingsInMemory: number;
  threads: number;
  dense: DenseBuildOptions | null;
  /** true: continue an interrupted build or fail; false: start over; 'auto': continue one when there is one. */
  resume: boolean | 'auto';
  /** The command that rebuilds this index, recorded in its manifest for error hints. */
  rebuildCommand: string;
  hub: HubConfig;
  log: Logger;
  progress: boolean;
  /** Stops downloads and the build between steps (build-index.ts BuildOptions.signal). */
  signal?: AbortSignal;
  /** Hears that the text phase is on disk before the vectors are embedded (build-index.ts). */
  onTextPhase?: BuildOptions['onTextPhase'];
}

/** The dense options of a build that names only some encoder settings: the rest are config.ts's defaults. */
export function defaultDenseOptions(encoder: Partial<EncoderChoice>): DenseBuildOptions {
  const E = DEFAULTS.encoder;
  return {
    encoder: {
      model: E.model,
      variant: E.variant,
      revision: E.revision,
      device: E.device,
      threads: E.threads,
      batchSize: E.batchSize,
      ...encoder,
    },
    vectorsDtype: DEFAULTS.vectorsDtype,
    exactBelow: DEFAULTS.exactBelow,
    ann: { quantization: DEFAULT_QUANTIZATION },
    annThreads: DEFAULTS.annThreads,
    annCheckpointMinutes: DEFAULTS.annCheckpointMinutes,
    embedWindow: DEFAULTS.embedWindow,
  };
}

/**
 * Builds a corpus's index from a preset (downloading its data) or a file:
 * resolves the input and chunking, opens the encoder for the dense arm, and
 * runs the build. The CLI and the server's first-run build both come here.
 */
export async function buildCorpus(options: BuildCorpusOptions): Promise<BuildSummary> {
  const o = options.signal ? { ...options, hub: { ...options.hub, signal: options.signal } } : options;
  const preset = o.preset !== undefined ? requirePreset(o.preset) : undefined;
  // a preset whose file only its publisher serves (kilt) needs --input before anything is fetched
  if (preset && !preset.corpus && !o.input) await fetchPresetFile(preset, 'corpus', o.hub);
  const name = o.name ?? preset?.name;
  // a folder is read as a folder of documents: no other format reads one
  const format =
    o.format ?? (preset?.format as CorpusFormat | undefined) ?? (o.input && isFolder(o.input) ? 'files' : undefined);
  if (!name || !format || (!o.input && !preset)) {
    throw new RetrieverError(
      'BAD_INPUT',
      'retriever-mcp build needs --corpus PRESET, or --name and --input (a folder of documents, or a corpus file with its --format) (see retriever-mcp build --help)',
    );
  }
  if (o.input && format !== 'files') {
    if (isFolder(o.input)) {
      throw new RetrieverError(
        'BAD_INPUT',
        `${o.input} is a folder, and --format ${format} reads one file: pass --format files (or no --format) to index the documents in it, or the corpus file itself`,
      );
    }
    checkInputFile(o.input, '--input');
  }
  if (o.hub.offline) checkOffline(o, preset);
  if (o.importVectors && !preset) {
    throw new RetrieverError('BAD_INPUT', '--import-vectors needs --corpus PRESET; use --vectors PATH otherwise');
  }
  let chunkSize = o.chunkSize ?? preset?.chunk_size ?? CHUNK_SIZE_BY_FORMAT[format];
  let chunkOverlap = chunkSize > 0 ? (o.chunkOverlap ?? preset?.chunk_overlap ?? DEFAULTS.chunkOverlap) : 0;
  if (chunkSize > 0 && chunkOverlap >= chunkSize) {
    throw new RetrieverError(
      'BAD_INPUT',
      `--chunk-overlap must be an integer from 0 to ${chunkSize - 1} (below --chunk-size), got ${chunkOverlap}`,
    );
  }
  const input = o.input ?? (await fetchPresetFile(preset as Preset, 'corpus', o.hub));
  let dense = o.dense;
  if (dense && preset && o.importVectors) {
    dense = {
      ...dense,
      vectors: { path: await fetchPresetVectors(preset, o.hub), format: 'faiss', spotCheck: 0, minCosine: 0 },
    };
  }
  o.signal?.throwIfAborted();
  const phase = dense
    ? await openDensePhase({ ...dense, text: dense.text ?? DEFAULT_DENSE_TEXT[format] }, o.hub, o.log)
    : null;
  if (phase && chunkSize > 0 && o.chunkUnit !== 'words') {
    const window = phase.window;
    if (chunkSize > window && o.chunkSize === undefined) {
      // a default chunk the model cannot see whole: fit the chunk to the model's window
      chunkSize = window;
      chunkOverlap = o.chunkOverlap ?? Math.min(chunkOverlap, Math.floor(window / 10));
      o.log.info(
        `chunks of ${chunkSize} tokens (overlap ${chunkOverlap}): the model reads at most ${window} per passage`,
      );
    } else if (chunkSize > window) {
      o.log.warn(
        `--chunk-size ${chunkSize} is more than the ${window} tokens the model reads per passage: the dense arm sees only each chunk's start; pass --chunk-size ${window} or less`,
      );
    }
  }
  try {
    return await buildIndex({
      name,
      input,
      format,
      indexDir: o.indexDir,
      chunkSize,
      chunkOverlap,
      ...(o.chunkUnit !== undefined ? { chunkUnit: o.chunkUnit } : {}),
      bm25: o.bm25,
      maxPostingsInMemory: o.maxPostingsInMemory,
      threads: o.threads,
      ...(o.folder ? { folder: o.folder } : {}),
      dense: phase?.phase ?? null,
      resume: o.resume,
      rebuildCommand: o.rebuildCommand,
      log: o.log,
      progress: o.progress,
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.onTextPhase ? { onTextPhase: o.onTextPhase } : {}),
    });
  } finally {
    await phase?.close();
  }
}

async function openDensePhase(
  d: DenseBuildOptions,
  hub: HubConfig,
  log: Logger,
): Promise<{ phase: DensePhase; window: number; close: () => Promise<void> }> {
  if (d.vectors) checkInputFile(d.vectors.path, d.vectors.format === 'faiss' ? '--faiss-index' : '--vectors');
  // in a process of its own: a stop kills it mid-batch instead of waiting for the batch (encoder-child.ts)
  const { encoder, source } = await openEncoder({ ...d.encoder, host: 'process' }, hub);
  log.info(
    `encoder ${encoder.id} on ${d.encoder.device} (${describeEncoder(encoder)}); it embeds each chunk's ${d.vectors ? 'contents (imported vectors)' : (d.text ?? 'contents')}`,
  );
  const phase = createDensePhase({
    encoder,
    source,
    vectorsDtype: d.vectorsDtype,
    exactBelow: d.exactBelow,
    annThreads: d.annThreads,
    annCheckpointMs: d.annCheckpointMinutes > 0 ? d.annCheckpointMinutes * 60_000 : Infinity,
    windowSize: d.embedWindow,
    ...(d.reuseVectors === false ? { reuse: false } : {}),
    ...(d.text ? { text: d.text } : {}),
    ...(d.vectors ? { importFrom: d.vectors } : {}),
    ann: d.ann,
    ...(d.annKind ? { annKind: d.annKind } : {}),
    ...(d.ivf ? { ivf: d.ivf } : {}),
  });
  // the chunk tokens a passage can carry: the window less [CLS], [SEP] and the passage prefix
  const s = encoder.settings;
  const window = s.maxLength - 2 - (s.passagePrefix ? encoder.tokenCounter.count(s.passagePrefix) : 0);
  return { phase, window, close: () => encoder.close() };
}

function requirePreset(name: string): Preset {
  const p = getPreset(name);
  if (!p) {
    throw new RetrieverError(
      'BAD_INPUT',
      `unknown corpus preset "${name}": choose one of ${listPresets().join(', ')} (or use --name/--input/--format)`,
    );
  }
  return p;
}

/** With --offline, every file the build would download must be cached: name all that are not, at once. */
function checkOffline(o: BuildCorpusOptions, preset: Preset | undefined): void {
  const wanted: HubFile[] = [
    ...(preset && !o.input ? [presetHubFile(preset, 'corpus')].filter((f): f is HubFile => f !== undefined) : []),
    ...(o.dense && !o.dense.vectors ? modelHubFiles(o.dense.encoder) : []),
  ];
  const missing = wanted.filter((f) => !cachedPath(o.hub.cacheDir, f));
  if (missing.length > 0) {
    throw new RetrieverError(
      'DOWNLOAD',
      `--offline, and ${missing.length} file(s) the build needs are not in the cache ${o.hub.cacheDir}: ` +
        `${missing.map((f) => `${f.repo}/${f.path}`).join(', ')}; run once without --offline to download them, or pass local files (--input, --model-path)`,
    );
  }
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Fails fast, before any model download, when a file cannot be read. */
function checkInputFile(path: string, flag: string): void {
  try {
    if (!statSync(path).isFile()) throw new Error('not a regular file');
  } catch (err) {
    throw new RetrieverError(
      'BAD_INPUT',
      `cannot read input ${path}: ${(err as Error).message}; check the ${flag} path`,
    );
  }
}

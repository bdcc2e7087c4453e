import { statSync } from 'node:fs';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { CHUNK_SIZE_BY_FORMAT, DEFAULTS } from '../config.js';
import { DEFAULT_MODEL } from '../encoder/load-encoder.js';
import { RetrieverError } from '../errors.js';
import type { DensePhase } from '../build/build-index.js';
import { ANN_DEFAULTS } from '../index/dense/ann.js';
import { CORPUS_FORMATS, type CorpusFormat } from '../ingest/types.js';
import { getPreset, listPresets, type Preset } from '../presets/presets.js';
import { createLogger, type Logger } from '../util/log.js';
import { exitWhenDone, failUsage, runMain } from './boundary.js';
import { batchPadding, checkInt, ENCODER_RUNTIME_OPTIONS, hubConfig } from './shared-options.js';
import type { HubConfig } from '../hub/download.js';

const PROG = 'build-index';

export async function main(argv: string[]): Promise<void> {
  const args = await yargs(argv)
    .scriptName(PROG)
    .usage(
      '$0 --corpus PRESET [options]\n$0 --name NAME --input PATH --format FORMAT [options]\n\nBuild the chunk store and indexes of a corpus.',
    )
    .option('corpus', {
      type: 'string',
      describe: 'a preset from corpora/: wiki18, multihop, graphrag-medical, graphrag-novel',
    })
    .option('import-vectors', {
      type: 'boolean',
      default: false,
      describe: "with --corpus: download and import the preset's published vectors instead of encoding",
    })
    .option('name', { type: 'string', describe: 'corpus name (the index directory under --index-dir)' })
    .option('input', { type: 'string', describe: 'corpus file (.jsonl, .json; .gz is read transparently)' })
    .option('format', { choices: CORPUS_FORMATS, describe: 'input format' })
    .option('index-dir', { type: 'string', default: DEFAULTS.indexDir, describe: 'where indexes are written' })
    .option('chunk-size', {
      type: 'number',
      describe: `tokens per chunk, 0 = one chunk per record (default: ${formatChunkDefaults()})`,
    })
    .option('chunk-overlap', {
      type: 'number',
      describe: `tokens shared by consecutive chunks (default ${DEFAULTS.chunkOverlap})`,
    })
    .option('dense', {
      type: 'boolean',
      default: true,
      describe: 'build the dense (e5 + HNSW) index; --no-dense for BM25 only',
    })
    .option('model', {
      type: 'string',
      default: DEFAULT_MODEL,
      describe: 'encoder: a Hugging Face model id (its ONNX conversion is downloaded)',
    })
    .option('model-path', {
      type: 'string',
      describe: 'encoder from a local directory in the Hugging Face ONNX layout',
    })
    .option('model-variant', {
      type: 'string',
      default: 'fp32',
      describe: 'ONNX file: fp32, fp16, int8 (model_quantized) or a path like onnx/model_q4.onnx',
    })
    .option('revision', {
      type: 'string',
      default: 'main',
      describe: 'hub revision (branch, tag or commit) of the model',
    })
    .option('max-length', { type: 'number', default: 512, describe: 'encoder max tokens per text (e5: 512)' })
    .option('pooling', {
      choices: ['mean', 'cls'] as const,
      default: 'mean' as const,
      describe: 'token pooling (e5: mean)',
    })
    .option('query-prefix', { type: 'string', default: 'query: ', describe: 'prepended to queries (e5 convention)' })
    .option('passage-prefix', {
      type: 'string',
      default: 'passage: ',
      describe: 'prepended to passages (e5 convention)',
    })
    .options(ENCODER_RUNTIME_OPTIONS)
    .option('vectors', {
      type: 'string',
      describe:
        'import precomputed passage vectors (.npy, .fbin or a FAISS flat .index) instead of encoding; row i = chunk i',
    })
    .option('faiss-index', {
      type: 'string',
      describe: 'import vectors from a FAISS IndexFlatIP/L2 file (e.g. e5_Flat.index)',
    })
    .option('spot-check', {
      type: 'number',
      default: 0,
      describe:
        'with --vectors: re-embed N evenly spaced chunks and require cosine ≥ --spot-check-min (needs the real model)',
    })
    .option('spot-check-min', { type: 'number', default: 0.99, describe: 'lowest acceptable spot-check cosine' })
    .option('vectors-dtype', {
      choices: ['f32', 'f16'] as const,
      default: 'f32' as const,
      describe: 'stored vectors (f32 keeps exact scores)',
    })
    .option('exact-below', {
      type: 'number',
      default: 20_000,
      describe: 'corpora with at most this many chunks are searched exactly (no HNSW)',
    })
    .option('ann-m', {
      type: 'number',
      describe: 'HNSW M, the graph degree (default 24 up to 20M chunks, 20 above: wiki-18 within 20 GB)',
    })
    .option('ann-ef-construction', {
      type: 'number',
      describe: `HNSW efConstruction (default ${ANN_DEFAULTS.expansionAdd} up to 2M chunks, 512 above: 5.4–5.7× the graph build time for a graph that keeps recall as the corpus grows)`,
    })
    .option('ann-ef-search', {
      type: 'number',
      describe: `HNSW efSearch stored in the index (default with M ≥ 24: 128 up to 1M chunks, 384 up to 2M, 768 up to 10M; with a smaller M: ${ANN_DEFAULTS.expansionSearch} up to 1M, 768 up to 10M; 1536 above 10M for any M)`,
    })
    .option('ann-quantization', {
      choices: ['f32', 'f16', 'i8'] as const,
      default: ANN_DEFAULTS.quantization,
      describe: 'HNSW vector quantization',
    })
    .option('ann-threads', { type: 'number', default: 0, describe: 'threads for HNSW construction (0 = all cores)' })
    .option('ann-checkpoint-minutes', {
      type: 'number',
      default: DEFAULTS.annCheckpointMinutes,
      describe:
        'save the HNSW graph this often while it is built, for --resume after a crash (0 = never; each save writes the graph so far)',
    })
    .option('embed-window', {
      type: 'number',
      default: 4096,
      describe: 'chunks embedded per resumable window (advanced)',
    })
    .option('resume', {
      type: 'boolean',
      default: false,
      describe: 'continue an interrupted build of the same input and options',
    })
    .option('bm25-k1', { type: 'number', default: DEFAULTS.bm25.k1, describe: 'BM25 k1' })
    .option('bm25-b', { type: 'number', default: DEFAULTS.bm25.b, describe: 'BM25 b' })
    .option('max-postings-in-memory', {
      type: 'number',
      default: DEFAULTS.maxPostingsInMemory,
      describe:
        'BM25 postings held before spilling a sorted run to disk, shared by the threads (held encoded, a few bytes each; at most 160M per thread)',
    })
    .option('threads', {
      type: 'number',
      default: DEFAULTS.buildThreads,
      describe: 'BM25 inversion worker threads (0 = on the main thread)',
    })
    .option('progress', { type: 'boolean', default: true, describe: 'show progress on stderr' })
    .option('quiet', { type: 'boolean', default: false, describe: 'only print errors and the summary' })
    .strict()
    .fail(failUsage(PROG))
    .help()
    .version(false)
    .parseAsync();

  const presetName = args.corpus;
  const preset = presetName !== undefined ? requirePreset(presetName) : undefined;
  const name = args.name ?? preset?.name;
  const format = (args.format ?? preset?.format) as CorpusFormat | undefined;
  if (!name || !format || (!args.input && !preset)) {
    throw new RetrieverError(
      'BAD_INPUT',
      'build-index needs --corpus PRESET, or --name, --input and --format (see build-index --help)',
    );
  }
  const chunkSize = args['chunk-size'] ?? preset?.chunk_size ?? CHUNK_SIZE_BY_FORMAT[format];
  const overlap = args['chunk-overlap'] ?? preset?.chunk_overlap ?? DEFAULTS.chunkOverlap;
  checkInt('--chunk-size', chunkSize, 0, 100_000);
  if (chunkSize > 0) checkInt('--chunk-overlap', overlap, 0, chunkSize - 1);
  checkInt('--max-postings-in-memory', args['max-postings-in-memory'], 1000, 2 ** 31);
  checkInt('--threads', args.threads, 0, 64);
  if (!(args['bm25-k1'] >= 0) || !(args['bm25-b'] >= 0 && args['bm25-b'] <= 1)) {
    throw new RetrieverError('BAD_INPUT', '--bm25-k1 must be ≥ 0 and --bm25-b within [0, 1]');
  }
  if (args.input) checkInputFile(args.input);
  if (args['import-vectors'] && !preset) {
    throw new RetrieverError('BAD_INPUT', '--import-vectors needs --corpus PRESET; use --vectors PATH otherwise');
  }
  const log = createLogger(args.quiet ? 'warn' : 'info');
  const progress = args.progress && !args.quiet;
  const hub = hubConfig(args, log, progress);
  let input = args.input;
  if (!input && preset) {
    const { fetchPresetFile } = await import('../presets/presets.js');
    input = await fetchPresetFile(preset, 'corpus', hub);
  }
  if (preset && args['import-vectors']) {
    const { fetchPresetVectors } = await import('../presets/presets.js');
    args['faiss-index'] = await fetchPresetVectors(preset, hub);
  }
  const { buildIndex, formatSummary } = await import('../build/build-index.js');
  const dense = args.dense ? await openDensePhase(args, log, hub) : null;
  try {
    const summary = await buildIndex({
      name,
      input: input as string,
      format,
      indexDir: args['index-dir'],
      chunkSize,
      chunkOverlap: chunkSize > 0 ? overlap : 0,
      bm25: { k1: args['bm25-k1'], b: args['bm25-b'] },
      maxPostingsInMemory: args['max-postings-in-memory'],
      threads: args.threads,
      dense: dense?.phase ?? null,
      resume: args.resume,
      rebuildCommand: rebuildCommand(argv),
      log,
      progress,
    });
    process.stderr.write(`${formatSummary(summary)}\n`);
  } finally {
    await dense?.close();
  }
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

/** Fails fast, before any model download, when the input cannot be read. */
function checkInputFile(path: string): void {
  try {
    if (!statSync(path).isFile()) throw new Error('not a regular file');
  } catch (err) {
    throw new RetrieverError(
      'BAD_INPUT',
      `cannot read input ${path}: ${(err as Error).message}; check the --input path`,
    );
  }
}

interface DenseArgs {
  model: string;
  'model-path'?: string;
  'model-variant': string;
  revision: string;
  'max-length': number;
  pooling: 'mean' | 'cls';
  'query-prefix': string;
  'passage-prefix': string;
  device: 'cpu' | 'cuda';
  'batch-size': number;
  'batch-padding': number;
  'encoder-threads': number;
  'cache-dir'?: string;
  offline: boolean;
  'vectors-dtype': 'f32' | 'f16';
  'exact-below': number;
  'ann-m': number | undefined;
  'ann-ef-construction': number | undefined;
  'ann-ef-search': number | undefined;
  'ann-quantization': 'f32' | 'f16' | 'i8';
  'ann-threads': number;
  'ann-checkpoint-minutes': number;
  vectors?: string;
  'faiss-index'?: string;
  'spot-check': number;
  'spot-check-min': number;
  'embed-window': number;
}

async function openDensePhase(
  args: DenseArgs,
  log: Logger,
  hub: HubConfig,
): Promise<{ phase: DensePhase; close: () => Promise<void> }> {
  checkInt('--batch-size', args['batch-size'], 1, 4096);
  checkInt('--encoder-threads', args['encoder-threads'], 0, 256);
  checkInt('--max-length', args['max-length'], 8, 8192);
  checkInt('--exact-below', args['exact-below'], 0, 2 ** 31);
  if (args['ann-m'] !== undefined) checkInt('--ann-m', args['ann-m'], 2, 256);
  if (args['ann-ef-construction'] !== undefined)
    checkInt('--ann-ef-construction', args['ann-ef-construction'], 1, 4096);
  if (args['ann-ef-search'] !== undefined) checkInt('--ann-ef-search', args['ann-ef-search'], 1, 4096);
  checkInt('--ann-threads', args['ann-threads'], 0, 256);
  checkInt('--ann-checkpoint-minutes', args['ann-checkpoint-minutes'], 0, 7 * 24 * 60);
  const { openEncoder } = await import('../encoder/load-encoder.js');
  const { createDensePhase } = await import('../build/dense-phase.js');
  const choice = {
    model: args.model,
    variant: args['model-variant'],
    revision: args.revision,
    device: args.device,
    threads: args['encoder-threads'],
    batchSize: args['batch-size'],
    maxPadding: batchPadding(args['batch-padding']),
    maxLength: args['max-length'],
    pooling: args.pooling,
    queryPrefix: args['query-prefix'],
    passagePrefix: args['passage-prefix'],
    ...(args['model-path'] ? { modelPath: args['model-path'] } : {}),
  };
  if (args.vectors !== undefined && args['faiss-index'] !== undefined) {
    throw new RetrieverError('BAD_INPUT', 'give either --vectors or --faiss-index, not both');
  }
  checkInt('--spot-check', args['spot-check'], 0, 100_000);
  checkInt('--embed-window', args['embed-window'], 1, 1 << 20);
  const vectorsPath = args['faiss-index'] ?? args.vectors;
  if (vectorsPath !== undefined) checkInputFile(vectorsPath);
  const { encoder, source } = await openEncoder(choice, hub);
  log.info(`encoder ${encoder.id} on ${args.device} (dim ${encoder.dim})`);
  const phase = createDensePhase({
    encoder,
    source,
    vectorsDtype: args['vectors-dtype'],
    exactBelow: args['exact-below'],
    annThreads: args['ann-threads'],
    annCheckpointMs: args['ann-checkpoint-minutes'] > 0 ? args['ann-checkpoint-minutes'] * 60_000 : Infinity,
    windowSize: args['embed-window'],
    ...(vectorsPath !== undefined
      ? {
          importFrom: {
            path: vectorsPath,
            ...(args['faiss-index'] !== undefined ? { format: 'faiss' as const } : {}),
            spotCheck: args['spot-check'],
            minCosine: args['spot-check-min'],
          },
        }
      : {}),
    ann: {
      ...(args['ann-m'] !== undefined ? { connectivity: args['ann-m'] } : {}),
      ...(args['ann-ef-construction'] !== undefined ? { expansionAdd: args['ann-ef-construction'] } : {}),
      ...(args['ann-ef-search'] !== undefined ? { expansionSearch: args['ann-ef-search'] } : {}),
      quantization: args['ann-quantization'],
    },
  });
  return { phase, close: () => encoder.close() };
}

function formatChunkDefaults(): string {
  return Object.entries(CHUNK_SIZE_BY_FORMAT)
    .map(([f, n]) => `${f} ${n}`)
    .join(', ');
}

/** The command line that rebuilds this index, without --resume, for error hints. */
function rebuildCommand(argv: string[]): string {
  const kept = argv.filter((a) => a !== '--resume' && a !== '--no-progress' && a !== '--quiet');
  return [PROG, ...kept.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))].join(' ');
}

export async function run(): Promise<void> {
  const argv = hideBin(process.argv);
  const onSignal = (signal: NodeJS.Signals): void => {
    // finished phases are kept in the partial directory and nothing was published
    process.stderr.write(
      `\n${PROG}: interrupted by ${signal}; nothing was published (the previous index, if any, still serves). ` +
        `Resume with: ${rebuildCommand(argv)} --resume\n`,
    );
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  await runMain(PROG, () => main(argv));
  exitWhenDone(PROG);
}

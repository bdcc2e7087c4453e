import type { Argv, CommandModule } from 'yargs';
import { shellQuote } from '../util/shell-quote.js';
import type { BuildCorpusOptions, DenseBuildOptions } from '../app/build-corpus.js';
import { CHUNK_SIZE_BY_FORMAT, DEFAULTS } from '../config.js';
import { CORPUS_FORMATS, type CorpusFormat } from '../core/contracts.js';
import { DENSE_TEXT_RULES } from '../ingest/dense-text.js';
import { globRegExp } from '../ingest/files/globs.js';
import type { FolderOptions } from '../ingest/files/walk.js';
import { ANN_DEFAULTS_HELP, DEFAULT_QUANTIZATION } from '../index/dense/ann.js';
import { redactSecrets, RetrieverError } from '../errors.js';
import { cliLogger, exitWhenDone } from './boundary.js';
import {
  backendNodes,
  batchPadding,
  checkIndexDir,
  checkInt,
  ENCODER_RUNTIME_OPTIONS,
  hubConfig,
} from './shared-options.js';
import { validateCorpusName } from '../index/layout.js';
import { IVF_ABOVE, IVF_DEFAULTS_HELP } from '../index/dense/ivf-defaults.js';

/** The command's name in help and hints: `build-index`, or `retriever-mcp build` when run as that. */
let PROG = 'build-index';
const E = DEFAULTS.encoder;

/** Every flag, with its default from config.ts (help text quotes the same values). */
export const BUILD_OPTIONS = {
  corpus: { type: 'string', describe: 'a preset from corpora/: wiki18, multihop, graphrag-medical, graphrag-novel' },
  'import-vectors': {
    type: 'boolean',
    default: false,
    describe: "with --corpus: download and import the preset's published vectors instead of encoding",
  },
  name: { type: 'string', describe: 'corpus name (the index directory under --index-dir)' },
  input: {
    type: 'string',
    describe:
      'a folder of documents (Markdown, HTML, PDF, text; read as --format files) or a corpus file (.jsonl, .json; .gz is read transparently)',
  },
  format: { choices: CORPUS_FORMATS, describe: 'input format (a folder: files)' },
  include: {
    type: 'string',
    array: true,
    describe:
      'with a folder: globs of the files to read, relative to it (default: every .md .markdown .mdx .txt .text .rst .html .htm .xhtml .pdf)',
  },
  exclude: {
    type: 'string',
    array: true,
    describe: 'with a folder: globs of files or folders to leave out (hidden ones and node_modules always are)',
  },
  'max-file-mb': {
    type: 'number',
    default: DEFAULTS.maxFileMb,
    describe: 'with a folder: files larger than this are listed as skipped, not read',
  },
  'index-dir': { type: 'string', default: DEFAULTS.indexDir, describe: 'where indexes are written' },
  'chunk-size': {
    type: 'number',
    describe: `tokens per chunk, 0 = one chunk per record (default by format: ${Object.entries(CHUNK_SIZE_BY_FORMAT)
      .map(([f, n]) => `${f} ${n}`)
      .join(', ')})`,
  },
  'chunk-unit': {
    choices: ['model', 'words'] as const,
    describe:
      "what --chunk-size counts: the encoder's tokens when the build embeds passages (default, so chunks fit the model's window), words otherwise; pass words to get the same chunks with and without --no-dense",
  },
  'chunk-overlap': {
    type: 'number',
    describe: `tokens shared by consecutive chunks (default ${DEFAULTS.chunkOverlap})`,
  },
  dense: { type: 'boolean', default: true, describe: 'build the dense (e5 + HNSW) index; --no-dense for BM25 only' },
  model: {
    type: 'string',
    default: E.model,
    describe: 'encoder: a Hugging Face model id (its ONNX conversion is downloaded)',
  },
  'model-path': { type: 'string', describe: 'encoder from a local directory in the Hugging Face ONNX layout' },
  'model-variant': {
    type: 'string',
    default: E.variant,
    describe: 'ONNX file: fp32, fp16, int8 (model_quantized) or a path like onnx/model_q4.onnx',
  },
  revision: { type: 'string', default: E.revision, describe: 'hub revision (branch, tag or commit) of the model' },
  'max-length': {
    type: 'number',
    describe: "encoder max tokens per text (default: the model's sentence_bert_config.json, else 512)",
  },
  pooling: {
    choices: ['mean', 'cls'] as const,
    describe: "token pooling (default: the model's 1_Pooling/config.json, else mean)",
  },
  'query-prefix': {
    type: 'string',
    describe: "prepended to queries (default: the model's prompts, else its family's: e5 'query: ', bge's instruction)",
  },
  'passage-prefix': {
    type: 'string',
    describe: "prepended to passages (default: the model's prompts, else its family's: e5 'passage: ')",
  },
  vectors: {
    type: 'string',
    describe:
      'import precomputed passage vectors (.npy, .fbin or a FAISS flat .index) instead of encoding; row i = chunk i',
  },
  'faiss-index': { type: 'string', describe: 'import vectors from a FAISS IndexFlatIP/L2 file (e.g. e5_Flat.index)' },
  'spot-check': {
    type: 'number',
    default: 0,
    describe:
      'with --vectors: re-embed N evenly spaced chunks and require cosine ≥ --spot-check-min (needs the real model)',
  },
  'spot-check-min': { type: 'number', default: DEFAULTS.spotCheckMin, describe: 'lowest acceptable spot-check cosine' },
  'vectors-dtype': {
    choices: ['f32', 'f16'] as const,
    default: DEFAULTS.vectorsDtype,
    describe: 'stored vectors (f32 keeps exact scores)',
  },
  'dense-text': {
    choices: DENSE_TEXT_RULES,
    describe:
      'what the encoder embeds of each chunk: contents (the stored `"Title"\\nbody`) or title-body (`Title body`); default: the format\'s convention (beir title-body, wiki18 contents, the others title-body)',
  },
  'exact-below': {
    type: 'number',
    default: DEFAULTS.exactBelow,
    describe: 'corpora with at most this many chunks are searched exactly (no HNSW)',
  },
  ann: {
    choices: ['auto', 'hnsw', 'ivf'] as const,
    default: 'auto' as const,
    describe: `the dense index above --exact-below: an HNSW graph, an IVF index of 1-bit codes (a few GB where a graph takes tens), or auto (IVF above ${IVF_ABOVE.toLocaleString('en-US')} chunks)`,
  },
  'ivf-lists': { type: 'number', describe: `IVF lists (default: ${IVF_DEFAULTS_HELP.lists})` },
  'ivf-probes': {
    type: 'number',
    describe: `IVF lists scanned a query, stored in the index (default: ${IVF_DEFAULTS_HELP.probes}; a server's --ivf-probes overrides it)`,
  },
  'ivf-rescore': {
    type: 'number',
    describe: `IVF candidates re-scored exactly a query, stored in the index (default ${IVF_DEFAULTS_HELP.rescore}; a server's --ivf-rescore overrides it)`,
  },
  'ann-m': { type: 'number', describe: `HNSW M, the graph degree (${ANN_DEFAULTS_HELP.connectivity})` },
  'ann-ef-construction': { type: 'number', describe: `HNSW efConstruction (${ANN_DEFAULTS_HELP.expansionAdd})` },
  'ann-ef-search': {
    type: 'number',
    describe: `HNSW efSearch stored in the index (${ANN_DEFAULTS_HELP.expansionSearch})`,
  },
  'ann-quantization': {
    choices: ['f32', 'f16', 'i8'] as const,
    default: DEFAULT_QUANTIZATION,
    describe: 'HNSW vector quantization',
  },
  'ann-threads': {
    type: 'number',
    default: DEFAULTS.annThreads,
    describe: 'threads for HNSW construction (0 = all cores)',
  },
  'ann-checkpoint-minutes': {
    type: 'number',
    default: DEFAULTS.annCheckpointMinutes,
    describe: 'save the HNSW graph this often while it is built, for --resume after a crash (0 = never)',
  },
  'reuse-vectors': {
    type: 'boolean',
    default: true,
    describe:
      'a rebuild takes the vectors of chunks whose text the index it replaces already embedded with the same model; --no-reuse-vectors embeds every chunk',
  },
  'embed-window': {
    type: 'number',
    default: DEFAULTS.embedWindow,
    describe: 'chunks embedded per resumable window (advanced)',
  },
  resume: {
    type: 'boolean',
    describe:
      'continue an interrupted build of the same input and options (a plain run does so by itself when it can, and says so); --no-resume starts over',
  },
  'bm25-k1': { type: 'number', default: DEFAULTS.bm25.k1, describe: 'BM25 k1' },
  'bm25-b': { type: 'number', default: DEFAULTS.bm25.b, describe: 'BM25 b' },
  'max-postings-in-memory': {
    type: 'number',
    default: DEFAULTS.maxPostingsInMemory,
    describe:
      'BM25 postings held before spilling a sorted run to disk, shared by the threads (at most 160M per thread)',
  },
  threads: {
    type: 'number',
    default: DEFAULTS.buildThreads,
    describe: 'BM25 inversion worker threads (0 = on the main thread)',
  },
  backend: {
    type: 'string',
    describe:
      'also push the index to an OpenSearch cluster (node URLs, comma-separated); with only --name, push an index already built',
  },
  'backend-shards': { type: 'number', default: 3, describe: 'with --backend: primary shards of the pushed index' },
  'backend-replicas': { type: 'number', default: 1, describe: 'with --backend: replicas of each shard' },
  progress: { type: 'boolean', default: true, describe: 'show progress on stderr' },
  quiet: { type: 'boolean', default: false, describe: 'only print errors and the summary' },
} as const;

function buildOptions(y: Argv) {
  return y
    .usage(
      '$0 build --corpus PRESET [options]\n$0 build --name NAME --input FOLDER [options]\n$0 build --name NAME --input FILE --format FORMAT [options]\n\nBuild the chunk store and indexes of a corpus.',
    )
    .options(BUILD_OPTIONS)
    .options(ENCODER_RUNTIME_OPTIONS)
    .example('$0 build --corpus multihop', 'a preset: downloads its data and the default model, builds BM25 and dense')
    .example(
      "$0 build --name notes --input ./notes --exclude 'drafts/**'",
      'a folder of Markdown, HTML, PDF and text; rebuilding it re-embeds only the chunks that changed',
    )
    .example(
      '$0 build --name wiki --input wiki-18.jsonl.gz --format wiki18 --no-dense',
      'your own file, BM25 only (without --no-dense: a dense arm too, with the default model or --model)',
    )
    .example(
      '$0 build --name wiki --input wiki-18.jsonl.gz --format wiki18 --resume',
      'go on where a stopped build ended',
    );
}

type BuildArgs = Awaited<ReturnType<ReturnType<typeof buildOptions>['parseAsync']>>;

/** build-index: flags → BuildCorpusOptions → app/build-corpus.ts; the summary line goes to stderr. */
async function main(args: BuildArgs, argv: string[]): Promise<void> {
  const nodes = args.backend !== undefined ? backendNodes(args.backend) : undefined;
  // `--name X --backend URL` alone pushes the index already built (or resumes its push)
  const build = nodes === undefined || args.input !== undefined || args.corpus !== undefined;
  if (build) {
    const options = toBuildOptions(args, argv);
    const { buildCorpus } = await import('../app/build-corpus.js');
    const { formatSummary } = await import('../build/build-index.js');
    const summary = await buildCorpus(options);
    process.stderr.write(`${formatSummary(summary)}\n`);
  }
  if (nodes !== undefined) await push(args, nodes);
}

async function push(args: BuildArgs, nodes: string[]): Promise<void> {
  const name = args.name ?? args.corpus;
  if (name === undefined) throw new RetrieverError('BAD_INPUT', '--backend needs --name NAME (or --corpus PRESET)');
  checkIndexDir(args['index-dir']);
  checkInt('--backend-shards', args['backend-shards'], 1, 1024);
  checkInt('--backend-replicas', args['backend-replicas'], 0, 16);
  const dirFlag = args['index-dir'] !== DEFAULTS.indexDir ? ` --index-dir ${shellQuote(args['index-dir'])}` : '';
  const shown = redactSecrets(shellQuote(nodes.join(',')));
  interruptHint = `the push keeps what reached the engine; resume it with: ${BUILD_COMMAND} --name ${name}${dirFlag} --backend ${shown}`;
  const { pushToEngine } = await import('../app/push-corpus.js');
  const r = await pushToEngine({
    nodes,
    indexDir: args['index-dir'],
    name,
    shards: args['backend-shards'],
    replicas: args['backend-replicas'],
    progress: args.progress && !args.quiet,
    log: cliLogger(args.quiet ? 'warn' : 'info'),
    ...(signal ? { signal } : {}),
  });
  process.stderr.write(
    r.upToDate
      ? `${name}: already in the engine as ${r.index}; nothing to push\n`
      : `pushed ${name}: ${r.chunks} chunks into ${r.index}${r.resumedAt > 0 ? ` (resumed at ${r.resumedAt})` : ''} in ${r.seconds.toFixed(1)} s; serve it with: retriever-mcp --corpus ${name} --backend ${shown}\n`,
  );
}

/** What an interrupt says, once a push has started (a build's hint otherwise). */
let interruptHint: string | undefined;

function toBuildOptions(args: BuildArgs, argv: string[]): BuildCorpusOptions {
  checkIndexDir(args['index-dir']);
  // before a model or corpus is fetched for it
  if (args.name !== undefined) validateCorpusName(args.name);
  if (args['chunk-size'] !== undefined) checkInt('--chunk-size', args['chunk-size'], 0, 100_000);
  if (args['chunk-overlap'] !== undefined) checkInt('--chunk-overlap', args['chunk-overlap'], 0, 100_000);
  checkInt('--max-postings-in-memory', args['max-postings-in-memory'], 1000, 2 ** 31);
  checkInt('--threads', args.threads, 0, 64);
  if (!(args['bm25-k1'] >= 0) || !(args['bm25-b'] >= 0 && args['bm25-b'] <= 1)) {
    throw new RetrieverError('BAD_INPUT', '--bm25-k1 must be ≥ 0 and --bm25-b within [0, 1]');
  }
  const log = cliLogger(args.quiet ? 'warn' : 'info');
  const progress = args.progress && !args.quiet;
  return {
    ...(args.corpus !== undefined ? { preset: args.corpus } : {}),
    ...(args.name !== undefined ? { name: args.name } : {}),
    ...(args.input !== undefined ? { input: args.input } : {}),
    ...(args.format !== undefined ? { format: args.format as CorpusFormat } : {}),
    ...folderOptions(args),
    importVectors: args['import-vectors'],
    indexDir: args['index-dir'],
    ...(args['chunk-size'] !== undefined ? { chunkSize: args['chunk-size'] } : {}),
    ...(args['chunk-overlap'] !== undefined ? { chunkOverlap: args['chunk-overlap'] } : {}),
    ...(args['chunk-unit'] !== undefined ? { chunkUnit: args['chunk-unit'] } : {}),
    bm25: { k1: args['bm25-k1'], b: args['bm25-b'] },
    maxPostingsInMemory: args['max-postings-in-memory'],
    threads: args.threads,
    dense: args.dense ? denseOptions(args) : null,
    resume: args.resume ?? 'auto',
    rebuildCommand: rebuildCommand(argv),
    hub: hubConfig(args, log, progress),
    log,
    progress,
    ...(signal ? { signal } : {}),
  };
}

/** --include, --exclude and --max-file-mb, for a folder corpus. */
function folderOptions(args: BuildArgs): { folder?: FolderOptions } {
  const include = args.include?.map(String) ?? [];
  const exclude = args.exclude?.map(String) ?? [];
  const maxMb = args['max-file-mb'];
  if (!(maxMb > 0 && maxMb <= 4096)) {
    throw new RetrieverError('BAD_INPUT', `--max-file-mb must be a number of megabytes from 0 to 4096, got ${maxMb}`);
  }
  if (include.length === 0 && exclude.length === 0 && maxMb === DEFAULTS.maxFileMb) return {};
  for (const g of [...include, ...exclude]) globRegExp(g); // a malformed glob fails now, named
  return {
    folder: {
      ...(include.length > 0 ? { include } : {}),
      ...(exclude.length > 0 ? { exclude } : {}),
      maxFileBytes: Math.round(maxMb * 2 ** 20),
    },
  };
}

function denseOptions(args: BuildArgs): DenseBuildOptions {
  checkInt('--batch-size', args['batch-size'], 1, 4096);
  checkInt('--encoder-threads', args['encoder-threads'], 0, 256);
  if (args['max-length'] !== undefined) checkInt('--max-length', args['max-length'], 8, 8192);
  checkInt('--exact-below', args['exact-below'], 0, 2 ** 31);
  if (args['ann-m'] !== undefined) checkInt('--ann-m', args['ann-m'], 2, 256);
  if (args['ann-ef-construction'] !== undefined)
    checkInt('--ann-ef-construction', args['ann-ef-construction'], 1, 4096);
  if (args['ann-ef-search'] !== undefined) checkInt('--ann-ef-search', args['ann-ef-search'], 1, 4096);
  checkInt('--ann-threads', args['ann-threads'], 0, 256);
  if (args['ivf-lists'] !== undefined) checkInt('--ivf-lists', args['ivf-lists'], 1, 1 << 20);
  if (args['ivf-probes'] !== undefined) checkInt('--ivf-probes', args['ivf-probes'], 1, 1 << 20);
  if (args['ivf-rescore'] !== undefined) checkInt('--ivf-rescore', args['ivf-rescore'], 1, 1 << 20);
  checkInt('--ann-checkpoint-minutes', args['ann-checkpoint-minutes'], 0, 7 * 24 * 60);
  checkInt('--spot-check', args['spot-check'], 0, 100_000);
  checkInt('--embed-window', args['embed-window'], 1, 1 << 20);
  if (args.vectors !== undefined && args['faiss-index'] !== undefined) {
    throw new RetrieverError('BAD_INPUT', 'give either --vectors or --faiss-index, not both');
  }
  const vectorsPath = args['faiss-index'] ?? args.vectors;
  return {
    encoder: {
      model: args.model,
      variant: args['model-variant'],
      revision: args.revision,
      device: args.device,
      threads: args['encoder-threads'],
      batchSize: args['batch-size'],
      maxPadding: batchPadding(args['batch-padding']),
      fuseAttention: args['fuse-attention'],
      ...(args['max-length'] !== undefined ? { maxLength: args['max-length'] } : {}),
      ...(args.pooling !== undefined ? { pooling: args.pooling } : {}),
      ...(args['query-prefix'] !== undefined ? { queryPrefix: args['query-prefix'] } : {}),
      ...(args['passage-prefix'] !== undefined ? { passagePrefix: args['passage-prefix'] } : {}),
      ...(args['model-path'] ? { modelPath: args['model-path'] } : {}),
    },
    vectorsDtype: args['vectors-dtype'],
    ...(args['dense-text'] !== undefined ? { text: args['dense-text'] } : {}),
    exactBelow: args['exact-below'],
    ann: {
      ...(args['ann-m'] !== undefined ? { connectivity: args['ann-m'] } : {}),
      ...(args['ann-ef-construction'] !== undefined ? { expansionAdd: args['ann-ef-construction'] } : {}),
      ...(args['ann-ef-search'] !== undefined ? { expansionSearch: args['ann-ef-search'] } : {}),
      quantization: args['ann-quantization'],
    },
    annKind: args.ann,
    ivf: {
      ...(args['ivf-lists'] !== undefined ? { lists: args['ivf-lists'] } : {}),
      ...(args['ivf-probes'] !== undefined ? { probes: args['ivf-probes'] } : {}),
      ...(args['ivf-rescore'] !== undefined ? { rescore: args['ivf-rescore'] } : {}),
    },
    annThreads: args['ann-threads'],
    annCheckpointMinutes: args['ann-checkpoint-minutes'],
    embedWindow: args['embed-window'],
    reuseVectors: args['reuse-vectors'],
    ...(vectorsPath !== undefined
      ? {
          vectors: {
            path: vectorsPath,
            ...(args['faiss-index'] !== undefined ? { format: 'faiss' as const } : {}),
            spotCheck: args['spot-check'],
            minCosine: args['spot-check-min'],
          },
        }
      : {}),
  };
}

/**
 * The command line that rebuilds this index, without --resume, for error
 * hints and the manifest: any password in a URL (--backend) is shown as ***.
 */
function rebuildCommand(argv: string[]): string {
  const kept = argv.filter((a) => a !== '--resume' && a !== '--no-progress' && a !== '--quiet');
  // always the name no other npm package can shadow (`npx build-index` is someone else's package)
  return redactSecrets([BUILD_COMMAND, ...kept.map(shellQuote)].join(' '));
}

/** What every hint calls the build command, however this one was started. */
const BUILD_COMMAND = 'retriever-mcp build';

/**
 * Runs the command; `as` names it (`retriever-mcp build`) in help, errors and
 * rebuild hints. The first SIGINT or SIGTERM stops the build between steps:
 * the encoder thread finishes its batch, the lock is released and the
 * partial directory keeps what --resume needs (exit 130 or 143, never a
 * native abort). A second one exits at once.
 */
/**
 * `retriever-mcp build` (alias `build-index`; also the `build-index` binary):
 * `argv` is the command's own arguments, for the resume hints, and `prog`
 * the name messages give it. The first SIGINT or SIGTERM stops the build
 * after its current step (finished phases kept for --resume); a second
 * exits at once.
 */
export function buildCommand(argv: string[], prog: string): CommandModule {
  return {
    command: 'build',
    aliases: ['build-index'],
    describe: 'build the chunk store and indexes of a corpus',
    builder: buildOptions,
    handler: async (args) => {
      PROG = prog;
      const stop = new AbortController();
      const onSignal = (sig: NodeJS.Signals): void => {
        const code = sig === 'SIGINT' ? 130 : 143;
        if (stop.signal.aborted) {
          process.stderr.write(`\n${PROG}: ${sig} again: exiting now\n`);
          // the signal's own default action ends the process at once: process.exit() waits for
          // libuv's threads, and one blocked in open() on a FIFO kept it alive for good
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
          process.kill(process.pid, sig);
          setTimeout(() => process.exit(code), 1000).unref();
          return;
        }
        process.exitCode = code;
        process.stderr.write(`\n${PROG}: ${sig}: stopping after the current step (send it again to exit at once)…\n`);
        // finished phases are kept in the partial directory and nothing is published
        const hint =
          interruptHint !== undefined
            ? `interrupted by ${sig}; ${interruptHint}`
            : `interrupted by ${sig}; nothing was published (the previous index, if any, still serves). ` +
              `Resume with: ${rebuildCommand(argv)} --resume`;
        stop.abort(new RetrieverError('STOPPED', hint));
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      signal = stop.signal;
      await main(args as unknown as BuildArgs, argv);
    },
  };
}

/** After the build command, however it ended: a stop's exit code, and no open handle keeps the process. */
export function afterBuild(): void {
  if (signal?.aborted) process.exitCode = process.exitCode === 143 ? 143 : 130;
  exitWhenDone(PROG);
}

/** Aborted by the first SIGINT or SIGTERM (see run). */
let signal: AbortSignal | undefined;

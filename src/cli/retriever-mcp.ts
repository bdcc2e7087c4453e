import type { Argv, CommandModule } from 'yargs';
import { getHeapStatistics } from 'node:v8';
import { answerBudgetMb, DEFAULTS, maxResultCacheMb, readEnv, resultCacheBudgetMb } from '../config.js';
import { describeValue, RetrieverError } from '../errors.js';
import { folderCorpusName, validateCorpusName } from '../index/layout.js';
import { getPreset } from '../presets/presets.js';
import { SEARCH_MODES, type SearchMode } from '../search/types.js';
import { isLoopbackName, LOOPBACK_HOST_NAMES } from '../server/transports/http/http-util.js';
import type { EncoderFlags } from '../app/encoders.js';
import type { RetrieverSetup } from '../app/open-retriever.js';
import type { ServeConfig } from '../app/serve.js';
import type { ServedFolder } from '../app/live-folders.js';
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Logger, type LogLevel } from '../util/log.js';
import { shellQuote } from '../util/shell-quote.js';
import { cliLogger, exitWhenDone } from './boundary.js';
import {
  backendNodes,
  batchPadding,
  checkIndexDir,
  checkInt,
  ENCODER_RUNTIME_OPTIONS,
  hubConfig,
} from './shared-options.js';

const PROG = 'retriever-mcp';

export const SERVE_OPTIONS = {
  corpus: {
    type: 'string',
    array: true,
    default: [] as string[],
    describe: 'corpus to serve (repeatable): a preset or a built index',
  },
  input: {
    type: 'string',
    array: true,
    default: [] as string[],
    describe:
      'a folder of documents to serve (repeatable): built on first start (BM25 answers while it embeds), kept current while serving',
  },
  name: { type: 'string', describe: "the corpus name of a single --input (default: the folder's name)" },
  watch: {
    type: 'boolean',
    default: true,
    describe: '--input folders: apply added, changed and removed files while serving; --no-watch serves them as built',
  },
  'index-dir': { type: 'string', default: DEFAULTS.indexDir, describe: 'where indexes live' },
  backend: {
    type: 'string',
    describe:
      'serve the corpora from an OpenSearch cluster: its node URLs, comma-separated (pushed there by retriever-mcp build --backend)',
  },
  transport: {
    choices: ['stdio', 'http'] as const,
    default: 'stdio' as const,
    describe: 'stdio (default) or http (Streamable HTTP, SSE and REST on one port)',
  },
  host: {
    type: 'string',
    default: DEFAULTS.host,
    describe: 'HTTP bind address; anything but loopback needs an explicit value',
  },
  port: { type: 'number', default: DEFAULTS.port, describe: 'HTTP port' },
  'top-k': { type: 'number', default: DEFAULTS.topK, describe: 'hits returned when a client does not say' },
  'max-top-k': { type: 'number', default: DEFAULTS.maxTopK, describe: 'largest top_k a client may ask for' },
  mode: { choices: SEARCH_MODES, describe: 'default mode (default: hybrid when the index has a dense arm, else bm25)' },
  candidates: { type: 'number', default: DEFAULTS.candidates, describe: 'hits each arm retrieves before fusion' },
  'rrf-k': { type: 'number', default: DEFAULTS.rrfK, describe: 'Reciprocal Rank Fusion k' },
  'bm25-weight': { type: 'number', default: DEFAULTS.weights.bm25, describe: 'RRF weight of the BM25 arm' },
  'dense-weight': { type: 'number', default: DEFAULTS.weights.dense, describe: 'RRF weight of the dense arm' },
  model: { type: 'string', describe: "query encoder (hub id); default: each index's own encoder" },
  'model-path': { type: 'string', describe: 'query encoder from a local Hugging Face ONNX directory' },
  'model-variant': { type: 'string', describe: 'ONNX file variant (fp32, fp16, int8 or a path)' },
  'ef-search': { type: 'number', describe: 'HNSW efSearch for every corpus (default: the value stored in each index)' },
  'rescore-factor': {
    type: 'number',
    default: DEFAULTS.rescoreFactor,
    describe: 'HNSW candidates re-scored exactly from the stored vectors, as a multiple of top_k',
  },
  encoder: {
    type: 'boolean',
    default: true,
    describe:
      'load the query encoder; --no-encoder serves dense search by query vectors alone (query_vectors on /retrieve, query_vector on search) and text queries by BM25, without the model',
  },
  'ivf-probes': {
    type: 'number',
    describe: 'IVF lists scanned a query, for every IVF corpus (default: the value stored in each index)',
  },
  'ivf-rescore': {
    type: 'number',
    describe:
      'IVF candidates re-scored exactly from the stored vectors a query, at least twice top_k (default: the value stored in each index)',
  },
  'bm25-threads': {
    type: 'number',
    default: DEFAULTS.bm25Threads,
    describe:
      'BM25 worker threads: each unfiltered BM25 or hybrid query is cut into N + 1 equal chunk ranges, scored at once by the threads and the main thread (0 = all inline; on many cores and a large corpus such as wiki-18, raise it to cut latency)',
  },
  mmap: {
    type: 'boolean',
    default: true,
    describe:
      'serve ANN files from the page cache (an HNSW graph memory-mapped, IVF lists read per query), shared by every process; --no-mmap reads them into RAM (faster IVF queries at many probes)',
  },
  'batch-max': {
    type: 'number',
    default: DEFAULTS.batchMax,
    describe: 'micro-batching: most queries per encoder call (1 = off)',
  },
  'batch-wait-ms': {
    type: 'number',
    default: DEFAULTS.batchWaitMs,
    describe: 'micro-batching: longest wait for a batch to fill',
  },
  'encoder-queue': {
    type: 'number',
    default: DEFAULTS.encoderQueueMax,
    describe: 'queries waiting for the encoder before 503',
  },
  'cache-size': { type: 'number', default: DEFAULTS.resultCacheSize, describe: 'cached results (0 = off)' },
  'vector-cache-size': {
    type: 'number',
    default: DEFAULTS.vectorCacheSize,
    describe: 'cached query vectors, so a repeated query skips the encoder (0 = off)',
  },
  'cache-mb': {
    type: 'number',
    describe: `heap the cached results may hold, MiB (0 = off; default: a quarter of the process's heap limit, at most ${DEFAULTS.resultCacheMb})`,
  },
  'max-answer-mb': {
    type: 'number',
    describe:
      "memory the answers in flight may hold between them, MiB; a search whose answer would pass it waits (stdio) or gets 503 + Retry-After (default: a quarter of the process's heap limit)",
  },
  'deadline-ms': { type: 'number', default: DEFAULTS.deadlineMs, describe: 'per-request deadline' },
  'max-inflight': {
    type: 'number',
    default: DEFAULTS.maxInFlight,
    describe: 'requests served at once before 503 + Retry-After',
  },
  'max-body-bytes': { type: 'number', default: DEFAULTS.maxBodyBytes, describe: 'largest HTTP request body' },
  stateless: { type: 'boolean', default: false, describe: 'never create MCP sessions on /mcp' },
  'resource-links': {
    type: 'boolean',
    default: false,
    describe:
      'end search results with a resource_link per hit (retriever://CORPUS/chunks/ID), for hosts that open MCP resources; ' +
      'off by default: glue code that reads every content block as text breaks on them',
  },
  'max-sessions': {
    type: 'number',
    default: DEFAULTS.maxSessions,
    describe: 'open MCP sessions at most (≈ 150 KB each); past it initialize is answered without a session',
  },
  'session-ttl-s': {
    type: 'number',
    default: DEFAULTS.sessionTtlS,
    describe: 'MCP sessions idle this many seconds are closed',
  },
  'max-connections': {
    type: 'number',
    default: DEFAULTS.maxConnections,
    describe: 'open HTTP connections at most; past it the longest-idle one is closed',
  },
  'header-timeout-ms': {
    type: 'number',
    default: DEFAULTS.headersTimeoutMs,
    describe: 'a connection must send its request headers within this time',
  },
  'allowed-hosts': {
    type: 'string',
    array: true,
    default: [] as string[],
    describe:
      'Host header names answered besides localhost, 127.0.0.1 and [::1] (DNS-rebinding guard; off when --host is not loopback and a token is set)',
  },
  'auth-token': {
    type: 'string',
    describe:
      'require "Authorization: Bearer TOKEN" on every route but /health and /ready, which answer probes without it (/ready then gives its status alone); or set RETRIEVER_MCP_TOKEN',
  },
  'allowed-origins': {
    type: 'string',
    array: true,
    default: [] as string[],
    describe: 'browser origins allowed on MCP endpoints besides localhost',
  },
  'cors-origins': { type: 'string', array: true, default: [] as string[], describe: 'origins that get CORS headers' },
  verify: {
    choices: ['auto', 'full', 'sample', 'sizes'] as const,
    default: 'auto' as const,
    describe:
      'checksums checked (auto: up to 4 GiB of index, each file’s first and last 64 MiB block before serving and every byte on a thread while serving, which stops on a damaged file; sampled blocks above; full: every byte before serving)',
  },
  build: {
    type: 'boolean',
    default: true,
    describe: 'build a missing preset index (wiki18, multihop, graphrag-*) before serving; --no-build to only explain',
  },
  'log-level': { choices: ['debug', 'info', 'warn', 'error', 'silent'] as const, default: 'info' as const },
} as const;

function serveOptions(y: Argv) {
  return y.options(SERVE_OPTIONS).options(ENCODER_RUNTIME_OPTIONS);
}

/** Serving, the program's default command: `argv` is the raw arguments, to tell a flag given from a default. */
export function serveCommand(argv: string[]): CommandModule {
  return {
    command: '$0',
    describe: 'serve corpora to MCP clients (stdio by default; Streamable HTTP, SSE and REST with --transport http)',
    builder: serveOptions,
    handler: async (parsed) => {
      const args = parsed as unknown as ServeArgs;
      const folders = servedFolders(args);
      // a folder is served as a corpus of its own name
      args.corpus = [...args.corpus, ...folders.map((f) => f.name)];
      checkFlags(args);
      const log = cliLogger(args['log-level'] as LogLevel);
      warnIgnoredFlags(argv, args.transport, log);
      const { serve } = await import('../app/serve.js');
      await serve({
        ...retrieverSetup(args, log, flagGiven(argv, 'top-k')),
        maxBatchQueries: DEFAULTS.maxBatchQueries,
        resourceLinks: args['resource-links'],
        transport: args.transport,
        answerBudgetBytes: answerBudgetMb(heapLimitMb(), args['max-answer-mb']) * 2 ** 20,
        http: httpConfig(args, log),
        ensureCorpus: args.build ? firstRunBuilder(args, log, folders) : undefined,
        folders,
        updateFolder: args.watch ? folderUpdater(args, log) : undefined,
      });
      // served and shut down: a handle left open (a worker thread, a socket) must not keep the process alive
      exitWhenDone(PROG);
    },
  };
}

type ServeArgs = Awaited<ReturnType<ReturnType<typeof serveOptions>['parseAsync']>>;

/** Flags that only the HTTP transport reads. */
const HTTP_ONLY_FLAGS = [
  'host',
  'port',
  'max-body-bytes',
  'max-sessions',
  'session-ttl-s',
  'max-connections',
  'header-timeout-ms',
  'allowed-hosts',
  'auth-token',
  'allowed-origins',
  'cors-origins',
] as const;

/** `--transport sse` is a guess at the legacy transport: say where it is served. */
export function refuseSseTransport(argv: readonly string[]): void {
  const i = argv.findIndex((a) => a === '--transport' || a.startsWith('--transport='));
  const value = i < 0 ? undefined : argv[i]?.includes('=') ? argv[i]?.split('=')[1] : argv[i + 1];
  if (value === 'sse') {
    throw new RetrieverError(
      'BAD_INPUT',
      '--transport sse: the legacy SSE transport is served by --transport http, at GET /sse and POST /messages, ' +
        'beside Streamable HTTP at /mcp and the REST routes on the same port',
    );
  }
}

function flagGiven(argv: readonly string[], flag: string): boolean {
  return argv.some((a) => a === `--${flag}` || a.startsWith(`--${flag}=`));
}

/** A flag the chosen transport ignores is most likely a forgotten --transport http: say so. */
function warnIgnoredFlags(argv: readonly string[], transport: string, log: Logger): void {
  if (transport === 'http') return;
  const given = HTTP_ONLY_FLAGS.filter((f) => argv.some((a) => a === `--${f}` || a.startsWith(`--${f}=`)));
  if (given.length > 0) {
    log.warn(
      `${given.map((f) => `--${f}`).join(', ')} ${given.length === 1 ? 'applies' : 'apply'} only to --transport http; ` +
        `serving over stdio, ${given.length === 1 ? 'it is' : 'they are'} ignored`,
    );
  }
}

function checkFlags(args: ServeArgs): void {
  if (args.corpus.length === 0) {
    throw new RetrieverError(
      'BAD_INPUT',
      'nothing to serve: pass --corpus NAME (a preset such as multihop, or an index built with `retriever-mcp build`) or --input FOLDER (a folder of documents)',
    );
  }
  checkIndexDir(args['index-dir']);
  // before anything starts: an HTTP server said it was listening, then refused the name
  for (const name of args.corpus) validateCorpusName(name);
  checkInt('--top-k', args['top-k'], 1, args['max-top-k']);
  checkInt('--max-top-k', args['max-top-k'], 1, 10_000);
  checkInt('--candidates', args.candidates, 1, 100_000);
  checkInt('--batch-size', args['batch-size'], 1, 4096);
  checkInt('--encoder-threads', args['encoder-threads'], 0, 256);
  checkInt('--port', args.port, 0, 65535);
  checkInt('--batch-max', args['batch-max'], 1, 4096);
  checkInt('--batch-wait-ms', args['batch-wait-ms'], 0, 10_000);
  checkInt('--encoder-queue', args['encoder-queue'], 1, 1_000_000);
  checkInt('--cache-size', args['cache-size'], 0, 10_000_000);
  checkInt('--vector-cache-size', args['vector-cache-size'], 0, 10_000_000);
  checkInt('--deadline-ms', args['deadline-ms'], 1, 3_600_000);
  checkInt('--max-inflight', args['max-inflight'], 1, 1_000_000);
  checkInt('--max-body-bytes', args['max-body-bytes'], 1024, 1 << 30);
  if (args['cache-mb'] !== undefined) {
    const heapMb = heapLimitMb();
    const max = maxResultCacheMb(heapMb);
    checkInt('--cache-mb', args['cache-mb'], 0, 1 << 20);
    if (args['cache-mb'] > max) {
      throw new RetrieverError(
        'BAD_INPUT',
        `--cache-mb ${args['cache-mb']} cannot fit: this process's heap limit is ${heapMb} MiB, and the cache may take at most half of it (${max}); ` +
          `lower --cache-mb, or raise the heap with NODE_OPTIONS=--max-old-space-size=${args['cache-mb'] * 4}`,
      );
    }
  }
  if (args['max-answer-mb'] !== undefined) checkInt('--max-answer-mb', args['max-answer-mb'], 1, 1 << 20);
  checkInt('--max-sessions', args['max-sessions'], 0, 1_000_000);
  checkInt('--session-ttl-s', args['session-ttl-s'], 1, 7 * 24 * 3600);
  checkInt('--max-connections', args['max-connections'], 1, 1_000_000);
  checkInt('--header-timeout-ms', args['header-timeout-ms'], 100, 3_600_000);
  checkInt('--rescore-factor', args['rescore-factor'], 1, 100);
  checkInt('--bm25-threads', args['bm25-threads'], 0, 64);
  if (args['ef-search'] !== undefined) checkInt('--ef-search', args['ef-search'], 1, 100_000);
  if (args['ivf-probes'] !== undefined) checkInt('--ivf-probes', args['ivf-probes'], 1, 1 << 20);
  if (args['ivf-rescore'] !== undefined) checkInt('--ivf-rescore', args['ivf-rescore'], 1, 1 << 20);
  for (const f of ['rrf-k', 'bm25-weight', 'dense-weight'] as const) {
    if (!(args[f] >= 0) || (f === 'rrf-k' && args[f] === 0))
      throw new RetrieverError('BAD_INPUT', `--${f} must be a positive number, got ${args[f]}`);
  }
}

/**
 * The old generation's limit for this process, MiB, where the result cache lives: what
 * --max-old-space-size set (command line or NODE_OPTIONS), else V8's whole-heap limit. The
 * whole-heap figure counts the young generation too, which Node 24 made larger: 384 MiB for
 * --max-old-space-size=192, where Node 20 says 240, so a quarter of it overfilled the old space.
 */
function heapLimitMb(): number {
  const limit = Math.floor(getHeapStatistics().heap_size_limit / 2 ** 20);
  let flag: number | undefined;
  for (const f of [...process.execArgv, ...(process.env['NODE_OPTIONS'] ?? '').split(/\s+/)]) {
    const m = /^--max[-_]old[-_]space[-_]size=(\d+)$/.exec(f);
    if (m) flag = Number(m[1]);
  }
  return flag !== undefined && flag > 0 ? Math.min(flag, limit) : limit;
}

/** The presets' own default top-k, for the served corpora that are presets. */
function presetTopKs(names: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of names) {
    const k = getPreset(name)?.top_k;
    if (k !== undefined) out[name] = k;
  }
  return out;
}

function retrieverSetup(args: ServeArgs, log: Logger, topKGiven: boolean): RetrieverSetup {
  const cacheMb = resultCacheBudgetMb(heapLimitMb(), args['cache-mb']);
  if (args['cache-mb'] === undefined)
    log.debug(
      `result cache: up to ${cacheMb} MiB (a quarter of this process's ${heapLimitMb()} MiB heap, at most ${DEFAULTS.resultCacheMb}; --cache-mb sets it)`,
    );
  return {
    corpora: args.corpus,
    indexDir: args['index-dir'],
    retriever: {
      topK: args['top-k'],
      // a preset serves its own default top-k (multihop 4, graphrag 5) unless --top-k says otherwise
      ...(topKGiven ? {} : { topKByCorpus: presetTopKs(args.corpus) }),
      maxTopK: args['max-top-k'],
      maxQueryChars: DEFAULTS.maxQueryChars,
      candidates: args.candidates,
      rrfK: args['rrf-k'],
      weights: { bm25: args['bm25-weight'], dense: args['dense-weight'] },
      mode: args.mode as SearchMode | undefined,
      cacheSize: args['cache-size'],
      cacheBytes: cacheMb * 2 ** 20,
    },
    encoder: encoderFlags(args),
    hub: hubConfig(args, log, true),
    dense: {
      mmap: args.mmap,
      rescoreFactor: args['rescore-factor'],
      ...(args['ef-search'] !== undefined ? { expansionSearch: args['ef-search'] } : {}),
      ...(args['ivf-probes'] !== undefined ? { probes: args['ivf-probes'] } : {}),
      ...(args['ivf-rescore'] !== undefined ? { rescore: args['ivf-rescore'] } : {}),
    },
    batching: {
      maxBatch: args['batch-max'],
      maxWaitMs: args['batch-wait-ms'],
      maxQueue: args['encoder-queue'],
      cacheSize: args['vector-cache-size'],
    },
    bm25Threads: args['bm25-threads'],
    verify: args.verify,
    ...(args.backend !== undefined
      ? {
          backend: {
            nodes: backendNodes(args.backend),
            ...(args['ef-search'] !== undefined ? { efSearch: args['ef-search'] } : {}),
            shardRetryMs: args['deadline-ms'],
          },
        }
      : {}),
    log,
  };
}

/** The encoder settings given on the command line; unset ones are each index's own (serving) or the defaults (building). */
function encoderFlags(args: ServeArgs): EncoderFlags {
  return {
    device: args.device,
    threads: args['encoder-threads'],
    batchSize: args['batch-size'],
    maxPadding: batchPadding(args['batch-padding']),
    fuseAttention: args['fuse-attention'],
    ...(args.model !== undefined ? { model: args.model } : {}),
    ...(args['model-path'] !== undefined ? { modelPath: args['model-path'] } : {}),
    ...(args['model-variant'] !== undefined ? { variant: args['model-variant'] } : {}),
    ...(args.encoder === false ? { none: true } : {}),
  };
}

function httpConfig(args: ServeArgs, log: Logger): ServeConfig['http'] {
  const authToken = args['auth-token'] ?? readEnv().authToken;
  const allowedHosts = hostCheck(args.host, authToken, args['allowed-hosts']);
  if (args.transport === 'http' && !isLoopbackName(args.host) && authToken === undefined) {
    log.warn(
      `listening on ${args.host} without --auth-token: anyone who can reach the port can query the corpora; ` +
        `requests must name a Host in ${(allowedHosts ?? []).join(', ')} (add names with --allowed-hosts)`,
    );
  }
  return {
    host: args.host,
    port: args.port,
    options: {
      allowedOrigins: args['allowed-origins'],
      corsOrigins: args['cors-origins'],
      maxBodyBytes: args['max-body-bytes'],
      allowedHosts,
      connections: { maxConnections: args['max-connections'], headersTimeoutMs: args['header-timeout-ms'] },
      ...(authToken !== undefined ? { authToken } : {}),
    },
    admission: { maxInFlight: args['max-inflight'], deadlineMs: args['deadline-ms'] },
    mcp: { stateless: args.stateless, sessionTtlMs: args['session-ttl-s'] * 1000, maxSessions: args['max-sessions'] },
    drainMs: DEFAULTS.drainMs,
  };
}

/**
 * The first run's build of a missing preset: the preset's own defaults, with
 * the encoder and download settings this server was started with.
 */
/**
 * The folders of `--input`, each with its corpus name (`--name`, or the folder's own name made a
 * valid corpus name); a path that is not a folder is an error naming it.
 */
function servedFolders(args: ServeArgs): ServedFolder[] {
  if (args.name !== undefined && args.input.length !== 1) {
    throw new RetrieverError(
      'BAD_INPUT',
      `--name names the corpus of one --input folder; ${args.input.length} were given: drop --name (each is named after its folder)`,
    );
  }
  const folders = args.input.map((given) => {
    // an MCP host's config passes "~/notes" unexpanded: no shell stands between
    const path = resolve(given === '~' || given.startsWith('~/') ? join(homedir(), given.slice(1)) : given);
    let isDir = false;
    try {
      isDir = statSync(path).isDirectory();
    } catch {
      throw new RetrieverError(
        'BAD_INPUT',
        `--input ${describeValue(given)}: no such folder (${path}); give the folder of documents to serve`,
      );
    }
    if (!isDir) {
      throw new RetrieverError(
        'BAD_INPUT',
        `--input ${describeValue(given)} is a file, not a folder: serve a folder here, or build a corpus file with \`retriever-mcp build --name NAME --input FILE --format FORMAT\``,
      );
    }
    return { name: args.name ?? folderCorpusName(path), path };
  });
  const names = new Set<string>();
  for (const f of folders) {
    if (names.has(f.name) || args.corpus.includes(f.name)) {
      throw new RetrieverError(
        'BAD_INPUT',
        `two corpora would be named ${f.name}: give the folder another --name, or serve one folder per server`,
      );
    }
    names.add(f.name);
  }
  return folders;
}

/** The command that rebuilds a served folder's index, for its manifest. */
function folderRebuildCommand(args: ServeArgs, f: ServedFolder): string {
  return [
    'retriever-mcp',
    'build',
    '--name',
    f.name,
    '--input',
    f.path,
    '--index-dir',
    args['index-dir'],
    ...modelFlags(args),
  ]
    .map(shellQuote)
    .join(' ');
}

function modelFlags(args: ServeArgs): string[] {
  return [
    ...(args.model !== undefined ? ['--model', args.model] : []),
    ...(args['model-path'] !== undefined ? ['--model-path', args['model-path']] : []),
    ...(args['model-variant'] !== undefined ? ['--model-variant', args['model-variant']] : []),
  ];
}

/** A served folder's update: the same build as its first, re-using every unchanged file and vector, quietly. */
function folderUpdater(args: ServeArgs, log: Logger): NonNullable<ServeConfig['updateFolder']> {
  return async (folder, signal, onTextPhase) => {
    const { buildCorpus } = await import('../app/build-corpus.js');
    await buildCorpus({
      ...(await folderBuild(args, log, folder)),
      resume: false,
      log: quieter(log),
      progress: false,
      signal,
      onTextPhase,
    });
  };
}

/** What a served folder's first build and its updates share: the folder, the defaults, the encoder. */
async function folderBuild(args: ServeArgs, log: Logger, folder: ServedFolder) {
  const { defaultDenseOptions } = await import('../app/build-corpus.js');
  return {
    name: folder.name,
    input: folder.path,
    format: 'files' as const,
    indexDir: args['index-dir'],
    bm25: DEFAULTS.bm25,
    maxPostingsInMemory: DEFAULTS.maxPostingsInMemory,
    threads: DEFAULTS.buildThreads,
    dense: defaultDenseOptions(encoderFlags(args)),
    rebuildCommand: folderRebuildCommand(args, folder),
    hub: hubConfig(args, log, true),
  };
}

/** An update's build logs what it did at debug level: the server says once what each update changed. */
function quieter(log: Logger): Logger {
  return { ...log, info: (m) => log.debug(m) };
}

function firstRunBuilder(
  args: ServeArgs,
  log: Logger,
  folders: readonly ServedFolder[],
): NonNullable<ServeConfig['ensureCorpus']> {
  return async (name, signal, onTextPhase) => {
    const { buildCorpus, defaultDenseOptions } = await import('../app/build-corpus.js');
    const folder = folders.find((f) => f.name === name);
    if (folder) {
      await buildCorpus({
        ...(await folderBuild(args, log, folder)),
        resume: 'auto',
        log,
        progress: true,
        signal,
        ...(onTextPhase ? { onTextPhase } : {}),
      });
      return;
    }
    const flags = modelFlags(args);
    await buildCorpus({
      preset: name,
      indexDir: args['index-dir'],
      bm25: DEFAULTS.bm25,
      maxPostingsInMemory: DEFAULTS.maxPostingsInMemory,
      threads: DEFAULTS.buildThreads,
      dense: defaultDenseOptions(encoderFlags(args)),
      // a first run stopped part way (the server was restarted) goes on where it stopped
      resume: 'auto',
      rebuildCommand: ['retriever-mcp', 'build', '--corpus', name, '--index-dir', args['index-dir'], ...flags]
        .map(shellQuote)
        .join(' '),
      hub: hubConfig(args, log, true),
      log,
      progress: true,
      signal,
      ...(onTextPhase ? { onTextPhase } : {}),
    });
  };
}

/**
 * The Host names every route answers (DNS-rebinding guard), or null for no
 * check: that only when bound beyond loopback with a token, where the token
 * already keeps a rebinding page out. A specific bind address is answered too.
 */
function hostCheck(bind: string, token: string | undefined, extra: readonly string[]): string[] | null {
  if (!isLoopbackName(bind) && token !== undefined) return null;
  const names: string[] = [...LOOPBACK_HOST_NAMES];
  if (!isLoopbackName(bind) && bind !== '0.0.0.0' && bind !== '::') names.push(bind.includes(':') ? `[${bind}]` : bind);
  for (const h of extra) names.push(h.toLowerCase());
  return [...new Set(names)];
}

import { availableParallelism, homedir } from 'node:os';
import { join } from 'node:path';
import { BM25_DEFAULTS, type Bm25Params } from './index/bm25/scoring.js';
import type { CorpusFormat } from './core/contracts.js';
import { DEFAULT_MODEL } from './encoder/model-ids.js';
import { DEFAULT_FOLDER } from './ingest/files/walk.js';

/**
 * Every default in one place; option docs in the CLI quote these values.
 * This module is also the only place that reads environment variables.
 */
export const DEFAULTS = {
  /** Where built indexes live, one directory per corpus. */
  indexDir: 'indexes',
  /** Hits returned when a client does not ask for a number. */
  topK: 3,
  /** The largest top_k a client may ask for. */
  maxTopK: 100,
  /** Queries per batch_search call. */
  maxBatchQueries: 256,
  /** Longest accepted query, in characters; longer ones are an error, not silently cut. */
  maxQueryChars: 8192,
  /** Chunk size in tokens for formats that chunk (see CHUNK_SIZE_BY_FORMAT). */
  chunkSize: 500,
  /** Tokens repeated between consecutive chunks (whole sentences when possible). */
  chunkOverlap: 50,
  /** A folder corpus's largest file, in MiB: larger ones are listed as skipped, not read. */
  maxFileMb: DEFAULT_FOLDER.maxFileBytes / 2 ** 20,
  bm25: BM25_DEFAULTS as Bm25Params,
  /**
   * Postings build-index holds before spilling a sorted run, shared by the inversion threads; held
   * varint-encoded in the term counter's memory (most postings take one or two bytes). 32M
   * against 16M: faster at the same peak RSS (docs/lab-notes/2026-11-build-throughput.md
   * "Fewer id indexes, a cheaper merge").
   */
  maxPostingsInMemory: 32_000_000,
  /**
   * Fusion: each arm's candidates (≥ top_k), RRF k (Cormack et al. 2009) and the arms' weights.
   * Set on held-out queries with real models (BENCHMARKS.md "Quality with real models": the
   * common setting); k 60 with equal weights lost to it on three of four data sets.
   */
  candidates: 50,
  rrfK: 5,
  weights: { bm25: 1, dense: 0.67 },
  /** HNSW candidates re-scored exactly, as a multiple of the hits wanted. */
  rescoreFactor: 4,
  /** BM25 query threads per hybrid corpus: its BM25 arm runs beside the dense arm. */
  bm25Threads: 1,
  /** Cached search results (corpus, mode, top_k, filter, query). */
  resultCacheSize: 10_000,
  /**
   * Heap the cached results may hold, MiB (a top-100 list of 500-word passages is ≈ 0.6 MB): at most
   * this, and by default no more than a quarter of the process's heap limit (resultCacheBudgetMb).
   */
  resultCacheMb: 256,
  /** Cached query vectors per encoder. */
  vectorCacheSize: 10_000,
  /**
   * Encoder micro-batching: most queries per batch, longest wait, queue bound. No wait: an idle
   * encoder starts a query at once, and queries that arrive while a batch runs go together when
   * it returns; a 2 ms wait for company cost one client about 2 ms a query (bench encoder-real).
   */
  batchMax: 64,
  batchWaitMs: 0,
  encoderQueueMax: 4096,
  /** HTTP transport. */
  host: '127.0.0.1',
  port: 8099,
  deadlineMs: 30_000,
  maxInFlight: 1024,
  maxBodyBytes: 1 << 20,
  /** Open TCP connections; past it the longest-idle one is closed (RELIABILITY.md "Connections"). */
  maxConnections: 4096,
  /** A connection must send a request's headers within this, ms. */
  headersTimeoutMs: 10_000,
  /** MCP sessions idle this long are closed, s; each holds ≈ 150 KB. */
  sessionTtlS: 600,
  /** Open MCP sessions at most; past it an initialize is answered statelessly (no session id). */
  maxSessions: 1000,
  drainMs: 30_000,
  /** BM25 inversion threads for build-index (the main thread parses and writes SQLite meanwhile). */
  buildThreads: Math.max(1, Math.min(4, availableParallelism())),
  /** Minutes between saves of an HNSW graph under construction (--resume continues from the last). */
  annCheckpointMinutes: 15,
  /** HNSW construction threads (0: one per core). */
  annThreads: 0,
  /** Corpora of at most this many chunks are searched exactly, without a graph. */
  exactBelow: 20_000,
  /** Chunks embedded per resumable window of a build. */
  embedWindow: 4096,
  /** Stored passage vectors: f32 keeps dense scores exact. */
  vectorsDtype: 'f32',
  /** Lowest cosine a --spot-check of imported vectors accepts. */
  spotCheckMin: 0.99,
  /** The encoder when none is named, and how it runs. */
  encoder: {
    model: DEFAULT_MODEL,
    variant: 'fp32',
    revision: 'main',
    device: 'cpu',
    /** Texts per encoder batch. */
    batchSize: 32,
    /** ONNX Runtime threads (0: one per core). */
    threads: 0,
  },
} as const;

/**
 * Per-format chunking default: 0 keeps one chunk per record. wiki-18 and BEIR
 * passages are already retrieval units (and BEIR scores are per document);
 * MultiHop-RAG articles are chunked at 500 tokens as in the DeepSearch-RL
 * setup; GraphRAG-Bench books, generic jsonl and folders of files are chunked
 * the same way.
 */
export const CHUNK_SIZE_BY_FORMAT: Record<CorpusFormat, number> = {
  wiki18: 0,
  kilt: 0,
  beir: 0,
  jsonl: DEFAULTS.chunkSize,
  multihop: DEFAULTS.chunkSize,
  graphrag: DEFAULTS.chunkSize,
  files: DEFAULTS.chunkSize,
};

/**
 * The result cache's budget for a process whose V8 heap limit is `heapLimitMb`: the flag's value when
 * given, else a quarter of the heap, at most DEFAULTS.resultCacheMb. A full cache of 256 MB in a
 * 192 MB heap made the process abort under large batches (RELIABILITY.md "Memory").
 */
export function resultCacheBudgetMb(heapLimitMb: number, flag: number | undefined): number {
  return flag ?? Math.min(DEFAULTS.resultCacheMb, Math.floor(heapLimitMb / 4));
}

/**
 * Memory the answers in flight may hold between them, MiB (`--max-answer-mb`): by default a
 * quarter of the heap, beside the result cache's quarter, leaving half to everything else.
 */
export function answerBudgetMb(heapLimitMb: number, flag: number | undefined): number {
  return flag ?? Math.max(16, Math.floor(heapLimitMb / 4));
}

/** The largest --cache-mb a heap of `heapLimitMb` takes: half of it, leaving the rest to requests. */
export function maxResultCacheMb(heapLimitMb: number): number {
  return Math.floor(heapLimitMb / 2);
}

export interface EnvSettings {
  hfEndpoint: string;
  /** HF_HUB_OFFLINE=1 (huggingface_hub's switch): never reach the hub, as --offline. */
  hfHubOffline: boolean;
  hfToken: string | undefined;
  cacheDir: string;
  authToken: string | undefined;
  sharedDir: string | undefined;
}

/** Reads the environment once, at the CLI boundary. */
export function readEnv(env: NodeJS.ProcessEnv = process.env): EnvSettings {
  const xdg = env['XDG_CACHE_HOME'] || join(homedir(), '.cache');
  const hfHome = env['HF_HOME'] || join(xdg, 'huggingface');
  return {
    hfEndpoint: (env['HF_ENDPOINT'] || 'https://huggingface.co').replace(/\/+$/, ''),
    hfHubOffline: ['1', 'true', 'yes', 'on'].includes((env['HF_HUB_OFFLINE'] ?? '').trim().toLowerCase()),
    hfToken: env['HF_TOKEN'] || env['HUGGING_FACE_HUB_TOKEN'] || undefined,
    cacheDir: env['RETRIEVER_MCP_CACHE'] || env['HF_HUB_CACHE'] || join(hfHome, 'hub'),
    authToken: env['RETRIEVER_MCP_TOKEN'] || undefined,
    sharedDir: env['RETRIEVER_MCP_SHARED'] || undefined,
  };
}

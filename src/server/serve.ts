import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MicroBatcher, type MicroBatchOptions } from '../encoder/micro-batcher.js';
import { RetrieverError } from '../errors.js';
import type { VerifyMode } from '../index/file-integrity.js';
import { INDEX_FILES } from '../index/layout.js';
import { getPreset } from '../presets/presets.js';
import type { HubConfig } from '../hub/download.js';
import { openDenseArm, type DenseArmOptions } from '../index/dense/dense-arm.js';
import type { Retriever, RetrieverOptions } from '../search/retriever.js';
import type { QueryEncoder } from '../search/types.js';
import type { Logger } from '../util/log.js';
import { Admission, type AdmissionOptions } from './admission.js';
import { loadCorpusEncoders, type ServeEncoderFlags } from './encoders.js';
import type { HttpOptions } from './http.js';
import { loadRetriever } from './load.js';
import type { McpHttpOptions } from './mcp-http.js';
import { createServerMetrics, type ServerMetrics } from './metrics.js';

/** Requests a stdio client may have inside the server at once; more wait in its pipe. */
const STDIO_MAX_PENDING = 256;

export interface ServeConfig {
  corpora: string[];
  indexDir: string;
  retriever: RetrieverOptions;
  encoder: ServeEncoderFlags;
  hub: HubConfig;
  dense: DenseArmOptions;
  batching: Omit<MicroBatchOptions, 'onBatch' | 'onQueue'>;
  maxBatchQueries: number;
  /** BM25 worker threads per hybrid corpus. */
  bm25Threads: number;
  transport: 'stdio' | 'http';
  http: {
    host: string;
    port: number;
    options: HttpOptions;
    admission: AdmissionOptions;
    mcp: McpHttpOptions;
    drainMs: number;
  };
  log: Logger;
  verify: VerifyMode | 'auto';
  /** Build missing preset indexes before serving (false: explain and stop). */
  autoBuild: boolean;
  /** Extra build-index arguments for automatic builds (encoder, cache, offline). */
  buildArgs: string[];
}

/**
 * First run of a preset: builds its index (progress on stderr) before serving.
 * A missing non-preset index, or --no-build, is an error naming the command.
 */
export async function ensureIndexes(cfg: ServeConfig): Promise<void> {
  for (const name of cfg.corpora) {
    if (existsSync(join(cfg.indexDir, name, INDEX_FILES.manifest))) continue;
    const preset = getPreset(name);
    if (!preset) continue; // openCorpus explains how to build it
    const cmd = `build-index --corpus ${name}${cfg.indexDir !== 'indexes' ? ` --index-dir ${cfg.indexDir}` : ''}`;
    if (!cfg.autoBuild) {
      throw new RetrieverError(
        'INDEX_MISSING',
        `corpus ${name} is not built yet: run \`${cmd}\`, or start without --no-build to build it now`,
      );
    }
    cfg.log.info(`corpus ${name} is not built yet: building it now (${cmd}); this runs once`);
    const { main } = await import('../cli/build-index.js');
    await main(['--corpus', name, '--index-dir', cfg.indexDir, ...cfg.buildArgs]);
  }
}

/** Opens corpora and encoders (each wrapped in a micro-batcher) into a retriever. */
export async function openRetriever(cfg: ServeConfig, metrics: ServerMetrics): Promise<Retriever> {
  const batchers = new Set<MicroBatcher>();
  const retriever = await loadRetriever({
    indexDir: cfg.indexDir,
    corpora: cfg.corpora,
    log: cfg.log,
    retriever: cfg.retriever,
    verify: cfg.verify,
    bm25Threads: cfg.bm25Threads,
    openDense: (dir, manifest, hint) =>
      openDenseArm(dir, manifest.dense as NonNullable<typeof manifest.dense>, hint, cfg.dense),
    loadEncoders: async (corpora) => {
      const { encoders } = await loadCorpusEncoders(corpora, cfg.encoder, cfg.hub, cfg.log);
      const batched = new Map<QueryEncoder, MicroBatcher>();
      const out = new Map<string, QueryEncoder>();
      for (const [name, enc] of encoders) {
        let b = batched.get(enc);
        if (!b) {
          b = new MicroBatcher(enc, {
            ...cfg.batching,
            onBatch: (n) => metrics.encoderBatch.observe(n),
            onQueue: (d) => metrics.encoderQueue.set(d),
          });
          batched.set(enc, b);
          batchers.add(b);
        }
        out.set(name, b);
      }
      return out;
    },
  });
  metrics.cacheHits.source = () => retriever.cache.hits;
  metrics.cacheMisses.source = () => retriever.cache.misses;
  const caches = (): Array<[string, { readonly size: number; readonly bytes: number }]> => [
    ['results', retriever.cache],
    ...[...batchers].map((b): [string, { size: number; bytes: number }] => ['vectors', b.vectorCache]),
    ...retriever.corpora.map((c): [string, { size: number; bytes: number }] => ['filters', c.filters]),
  ];
  const sum = (pick: (c: { size: number; bytes: number }) => number) => () => {
    const byName = new Map<string, number>();
    for (const [name, c] of caches()) byName.set(name, (byName.get(name) ?? 0) + pick(c));
    return [...byName].map(([cache, v]): [{ cache: string }, number] => [{ cache }, v]);
  };
  metrics.cacheBytes.collect = sum((c) => c.bytes);
  metrics.cacheEntries.collect = sum((c) => c.size);
  return retriever;
}

export async function serve(cfg: ServeConfig): Promise<void> {
  const metrics = createServerMetrics();
  if (cfg.transport === 'stdio') {
    await ensureIndexes(cfg);
    const retriever = await openRetriever(cfg, metrics);
    const { serveStdio } = await import('./stdio.js');
    const admission = new Admission(cfg.http.admission);
    // stdio has one client: it is slowed by backpressure (requests held in the transport), never refused
    const maxPending = Math.min(STDIO_MAX_PENDING, cfg.http.admission.maxInFlight);
    await serveStdio(retriever, cfg.maxBatchQueries, (work) => admission.run(work), cfg.log, maxPending);
    return;
  }
  const { serveHttp } = await import('./serve-http.js');
  await serveHttp({
    host: cfg.http.host,
    port: cfg.http.port,
    http: cfg.http.options,
    admission: cfg.http.admission,
    mcp: cfg.http.mcp,
    maxBatchQueries: cfg.maxBatchQueries,
    metrics,
    log: cfg.log,
    drainMs: cfg.http.drainMs,
    load: async () => {
      await ensureIndexes(cfg);
      return openRetriever(cfg, metrics);
    },
  });
}

import { MicroBatcher, type MicroBatchOptions } from '../encoder/micro-batcher.js';
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

export interface ServeConfig {
  corpora: string[];
  indexDir: string;
  retriever: RetrieverOptions;
  encoder: ServeEncoderFlags;
  hub: HubConfig;
  dense: DenseArmOptions;
  batching: Omit<MicroBatchOptions, 'onBatch' | 'onQueue'>;
  maxBatchQueries: number;
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
}

/** Opens corpora and encoders (each wrapped in a micro-batcher) into a retriever. */
export async function openRetriever(cfg: ServeConfig, metrics: ServerMetrics): Promise<Retriever> {
  return loadRetriever({
    indexDir: cfg.indexDir,
    corpora: cfg.corpora,
    log: cfg.log,
    retriever: cfg.retriever,
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
        }
        out.set(name, b);
      }
      return out;
    },
  });
}

export async function serve(cfg: ServeConfig): Promise<void> {
  const metrics = createServerMetrics();
  if (cfg.transport === 'stdio') {
    const retriever = await openRetriever(cfg, metrics);
    const { serveStdio } = await import('./stdio.js');
    const admission = new Admission(cfg.http.admission);
    await serveStdio(retriever, cfg.maxBatchQueries, (work) => admission.run(work), cfg.log);
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
    load: () => openRetriever(cfg, metrics),
  });
}

import type { QueryEncoder } from '../core/contracts.js';
import { MicroBatcher, type MicroBatchOptions } from '../encoder/micro-batcher.js';
import type { HubConfig } from '../hub/download.js';
import { openDenseArm, type DenseArmOptions } from '../index/dense/dense-arm.js';
import type { VerifyMode } from '../index/file-integrity.js';
import type { ServedCorpus } from '../search/served-corpus.js';
import { openCorpus, openTextPhase, type OpenCorpus, type PendingArms } from '../search/open-corpus.js';
import type { Manifest } from '../index/manifest.js';
import { Retriever, type RetrieverOptions } from '../search/retriever.js';
import type { Logger } from '../util/log.js';
import { formatCount } from '../util/progress.js';
import { openCorpusEncoders, type EncoderFlags } from './encoders.js';

/** Everything that opens a set of built corpora for searching. */
export interface RetrieverSetup {
  corpora: string[];
  indexDir: string;
  retriever: RetrieverOptions;
  encoder: EncoderFlags;
  hub: HubConfig;
  dense: DenseArmOptions;
  batching: Omit<MicroBatchOptions, 'onBatch' | 'onQueue'>;
  /** BM25 worker threads per hybrid corpus (0: inline). */
  bm25Threads: number;
  verify: VerifyMode | 'auto';
  /** With verify 'auto': hash the index on a worker thread while serving (the server); see OpenOptions. */
  verifyInBackground?: boolean;
  log: Logger;
  /** Serve the corpora from this OpenSearch cluster instead of local index files. */
  backend?: EngineBackend;
  /** Observers of the encoders' micro-batches (the server's metrics); none for eval. */
  onEncoderBatch?: (size: number) => void;
  onEncoderQueue?: (depth: number) => void;
  /** Hears each step of a search and of its encoder calls, seconds (the server's stage metrics). */
  onStage?: (stage: string, seconds: number) => void;
  /** Corpora whose build still runs, served from its finished text phase (BM25 alone) meanwhile. */
  textPhases?: ReadonlyMap<string, { dir: string; manifest: Manifest; pending: PendingArms }>;
}

export interface EngineBackend {
  /** Node URLs; requests spread over them and fail over between them. */
  nodes: string[];
  /** k-NN ef_search; by default the build's own. */
  efSearch?: number;
  /** How long a search retries failed shards: the server's request deadline (engine-corpus.ts SHARD_RETRY_MS). */
  shardRetryMs?: number;
}

export interface OpenedRetriever {
  retriever: Retriever;
  /** The micro-batchers in front of the query encoders (their vector caches, for metrics). */
  batchers: MicroBatcher[];
  /** Settles when every local corpus's checksums are checked; rejects with the first damaged file. */
  integrity: Promise<void>;
}

/** One corpus on local index files, opened and checked as a server opens it. */
export function openLocalCorpus(setup: RetrieverSetup, name: string): OpenCorpus {
  return openCorpus(setup.indexDir, name, {
    openDense: (dir, manifest, hint, checked) =>
      openDenseArm(dir, manifest.dense as NonNullable<typeof manifest.dense>, hint, {
        ...setup.dense,
        checkGraph: !checked.everyByte,
      }),
    verify: setup.verify,
    verifyInBackground: setup.verifyInBackground === true,
    log: setup.log,
    bm25Threads: setup.bm25Threads,
  });
}

/**
 * Opens and checks every corpus (manifest, checksums, analyzer), then one
 * query encoder per distinct encoder among them, each behind a micro-batcher;
 * nothing is returned until all succeed, and whatever opened is closed if any fails.
 */
export async function openRetriever(setup: RetrieverSetup): Promise<OpenedRetriever> {
  const opened: ServedCorpus[] = [];
  const checks: Array<Promise<void>> = [];
  try {
    if (setup.backend) {
      // loaded only for an engine backend: OpenSearch's client takes ~80 ms to import, a tenth of a local start
      const { connectEngine } = await import('../engine/opensearch/client.js');
      const { openEngineCorpus } = await import('../engine/opensearch/engine-corpus.js');
      for (const name of setup.corpora) {
        // one client per corpus: closing a corpus closes its connections
        const c = await openEngineCorpus(
          connectEngine({ nodes: setup.backend.nodes }),
          name,
          setup.backend.efSearch,
          setup.backend.shardRetryMs,
          setup.log,
        );
        opened.push(c);
        setup.log.info(
          `opened ${name} on ${c.location}: ${formatCount(c.manifest.corpus.chunks)} chunks, modes ${c.modes.join('/')}, built ${c.manifest.built_at}`,
        );
      }
    }
    for (const name of setup.backend ? [] : setup.corpora) {
      const early = setup.textPhases?.get(name);
      if (early) {
        const c = openTextPhase(early.dir, name, early.manifest, { pending: early.pending });
        opened.push(c);
        setup.log.info(
          `serving ${name}'s text phase while its vectors are embedded: ${formatCount(c.manifest.corpus.chunks)} chunks, mode bm25`,
        );
        continue;
      }
      const c = openLocalCorpus(setup, name);
      opened.push(c);
      checks.push(c.integrity);
      setup.log.info(
        `opened ${name}: ${formatCount(c.manifest.corpus.chunks)} chunks, modes ${c.modes.join('/')}, built ${c.manifest.built_at}` +
          (c.dense ? `; dense index: ${c.dense.description}` : ''),
      );
    }
    const { encoders, all } = await openCorpusEncoders(opened, setup.encoder, setup.hub, setup.log);
    const onStage = setup.onStage;
    if (onStage) {
      for (const e of all) {
        e.onTiming = (t) => {
          for (const stage of ['tokenize', 'run', 'pool', 'hop'] as const) onStage(stage, t[stage]);
        };
      }
    }
    const batchers = new Map<QueryEncoder, MicroBatcher>();
    const byCorpus = new Map<string, QueryEncoder>();
    for (const [name, enc] of encoders) {
      let b = batchers.get(enc);
      if (!b) {
        b = new MicroBatcher(enc, {
          ...setup.batching,
          ...(setup.onEncoderBatch ? { onBatch: setup.onEncoderBatch } : {}),
          ...(setup.onEncoderQueue ? { onQueue: setup.onEncoderQueue } : {}),
        });
        batchers.set(enc, b);
      }
      byCorpus.set(name, b);
    }
    const integrity = Promise.all(checks).then(() => undefined);
    integrity.catch(() => undefined); // the server decides what a failed check means
    return {
      retriever: new Retriever(opened, byCorpus, {
        ...setup.retriever,
        ...(onStage ? { onStage } : {}),
        ...(setup.encoder.none ? { withoutEncoders: true } : {}),
      }),
      batchers: [...batchers.values()],
      integrity,
    };
  } catch (err) {
    await Promise.all(opened.map((c) => c.close()));
    throw err;
  }
}

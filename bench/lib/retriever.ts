import { DEFAULTS } from '../../src/config.js';
import { openDenseArm } from '../../src/index/dense/dense-arm.js';
import { openEncoder } from '../../src/encoder/load-encoder.js';
import type { Encoder } from '../../src/encoder/encoder.js';
import type { DenseManifest } from '../../src/index/manifest.js';
import type { ServedCorpus } from '../../src/search/served-corpus.js';
import { openCorpus, type OpenCorpus } from '../../src/search/open-corpus.js';
import { silentLogger } from '../../src/util/log.js';
import { Retriever } from '../../src/search/retriever.js';
import type { QueryEncoder } from '../../src/core/contracts.js';

/**
 * A built index opened as the server opens it: memory-mapped graph, re-scoring
 * from the stored vectors (the server's default depth unless `rescoreFactor`),
 * sizes checked; `ef` overrides the manifest's efSearch, `bm25Threads` > 0
 * splits BM25 searches with worker threads.
 */
export function openBenchCorpus(
  indexDir: string,
  name: string,
  opts: { ef?: number; bm25Threads?: number; rescoreFactor?: number } = {},
): OpenCorpus {
  return openCorpus(indexDir, name, {
    openDense: (dir, m, hint) =>
      openDenseArm(dir, m.dense!, hint, {
        mmap: true,
        rescoreFactor: opts.rescoreFactor ?? DEFAULTS.rescoreFactor,
        ...(opts.ef !== undefined ? { expansionSearch: opts.ef } : {}),
      }),
    verify: 'sizes',
    bm25Threads: opts.bm25Threads ?? 0,
  });
}

/** A retriever over one corpus with the server's default fusion (config.ts DEFAULTS), no result cache. */
export function benchRetriever(corpus: ServedCorpus, encoder: QueryEncoder, topK: number): Retriever {
  return new Retriever([corpus], new Map([[corpus.name, encoder]]), {
    topK,
    maxTopK: 100,
    maxQueryChars: 8192,
    candidates: DEFAULTS.candidates,
    rrfK: DEFAULTS.rrfK,
    weights: { ...DEFAULTS.weights },
    cacheSize: 0,
  });
}

/**
 * The encoder excluded: query text i gets row i of `vectors` (row-major, `dim`
 * wide), so real questions drive BM25 while the dense arm sees generated
 * query vectors; a text not in `texts` gets row 0.
 */
export function precomputedEncoder(texts: readonly string[], vectors: Float32Array, dim: number): QueryEncoder {
  const rowOf = new Map(texts.map((t, i) => [t, i]));
  return {
    id: 'precomputed',
    dim,
    embedQueries: async (ts) =>
      ts.map((t) => {
        const row = rowOf.get(t) ?? 0;
        return vectors.slice(row * dim, (row + 1) * dim);
      }),
  };
}

/** The query encoder an index was built with, from the local model directory its manifest names. */
export async function openManifestEncoder(dense: DenseManifest): Promise<Encoder> {
  const enc = dense.encoder;
  const { encoder } = await openEncoder(
    {
      model: enc.model,
      modelPath: enc.source.kind === 'local' ? enc.source.path : '',
      variant: enc.variant,
      revision: 'main',
      device: 'cpu',
      threads: 0,
      batchSize: 32,
      maxLength: enc.max_length,
      pooling: enc.pooling,
      queryPrefix: enc.query_prefix,
      passagePrefix: enc.passage_prefix,
    },
    { endpoint: '', cacheDir: '', offline: true, log: silentLogger, progress: false },
  );
  return encoder;
}

import { parentPort, workerData } from 'node:worker_threads';
import { RetrieverError } from '../../errors.js';
import { ChunkStore } from '../../store/chunk-store.js';
import { createEnglishAnalyzer } from '../../text/analyzer.js';
import { Bm25Searcher, type Bm25Stats, type NumRange } from './bm25-searcher.js';
import type { Bm25Params } from './scoring.js';

/**
 * A BM25 query thread: opens the corpus's term dictionary (SQLite, read-only)
 * and postings itself and answers searches over a range of chunk nums, so a
 * hybrid query's BM25 arm is split between it, the other threads and the main thread. Same
 * searcher, same bytes: its hits are the ones an inline search of that range
 * returns.
 */
export interface SearchWorkerInit {
  storePath: string;
  postingsPath: string;
  normsPath: string;
  blocksPath?: string;
  stats: Bm25Stats;
  params: Bm25Params;
  /** See `Bm25SearcherOptions.boundsMinBytes`. */
  boundsMinBytes?: number;
}

/** One search over `range` of the chunk nums (this thread's part of a split search). */
export type ToSearchWorker = { id: number; query: string; k: number; range: NumRange };

export type FromSearchWorker =
  { id: number; nums: Uint32Array; scores: Float64Array } | { id: number; error: { code: string; message: string } };

const port = parentPort;
if (port) {
  const init = workerData as SearchWorkerInit;
  const store = new ChunkStore(init.storePath);
  const searcher = new Bm25Searcher({
    postingsPath: init.postingsPath,
    normsPath: init.normsPath,
    ...(init.blocksPath !== undefined ? { blocksPath: init.blocksPath } : {}),
    lookupTerm: (t) => store.lookupTerm(t),
    analyzer: createEnglishAnalyzer(),
    stats: init.stats,
    params: init.params,
    ...(init.boundsMinBytes !== undefined ? { boundsMinBytes: init.boundsMinBytes } : {}),
  });
  port.on('message', (msg: ToSearchWorker) => {
    try {
      const hits = searcher.search(msg.query, msg.k, undefined, msg.range);
      const nums = new Uint32Array(hits.length);
      const scores = new Float64Array(hits.length);
      hits.forEach((h, i) => {
        nums[i] = h.num;
        scores[i] = h.score;
      });
      const reply: FromSearchWorker = { id: msg.id, nums, scores };
      port.postMessage(reply, [nums.buffer, scores.buffer]);
    } catch (err) {
      const code = err instanceof RetrieverError ? err.code : 'INTERNAL';
      const reply: FromSearchWorker = { id: msg.id, error: { code, message: (err as Error).message } };
      port.postMessage(reply);
    }
  });
}

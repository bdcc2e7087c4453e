import { Worker } from 'node:worker_threads';
import { RetrieverError, type ErrorCode } from '../../errors.js';
import type { ScoredHit } from '../../core/top-k.js';
import { mergeHits, type Bm25Searcher, type NumRange } from './bm25-searcher.js';
import type { FromSearchWorker, SearchWorkerInit, ToSearchWorker } from './bm25-search-worker.js';
import { builtFileUrl } from '../../util/built-file.js';

interface Pending {
  query: string;
  k: number;
  range: NumRange;
  resolve: (hits: ScoredHit[]) => void;
  reject: (err: Error) => void;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
  alive: boolean;
}

/**
 * BM25 searches shared with worker threads, so that a hybrid query's BM25 arm
 * runs on several cores and beside the HNSW walk: each search is cut into
 * equal ranges of chunk nums, one for the main thread and one for each live
 * thread, and all are scored at once (under load, BM25 and the dense arm
 * spread over the cores). A thread is always given the same range, so its
 * searcher learns where that range starts and ends in each long postings list
 * and later reads only that part. Each thread opens the index files itself.
 * A thread that fails is dropped and its searches, and all later ones if no
 * thread is left, run on `inline`, the main thread's searcher: a broken
 * thread costs speed, never an answer.
 */
export class Bm25Pool {
  private readonly threads: Thread[] = [];
  private next = 0;
  private closed = false;

  constructor(
    init: SearchWorkerInit,
    size: number,
    private readonly inline: Bm25Searcher,
    private readonly warn: (message: string) => void = () => undefined,
  ) {
    for (let i = 0; i < size; i++) this.threads.push(this.spawn(init));
  }

  /**
   * The k best chunks for `query`, exactly as `Bm25Searcher.search` returns
   * them (no filter: filtered searches stay inline). The threads' ranges are
   * posted first; the first range is searched here and now, before this
   * returns, so the caller's next work (the dense arm) overlaps only the
   * threads' parts. The lists merge into the whole search's hits and scores
   * (`mergeHits`).
   */
  search(query: string, k: number): Promise<ScoredHit[]> {
    const live = this.threads.filter((t) => t.alive);
    if (live.length === 0) return Promise.resolve(this.inline.search(query, k));
    const cuts = splitRange(this.inline.chunkCount, live.length + 1);
    const parts = live.map((t, i) =>
      this.post(t, query, k, { from: cuts[i + 1] as number, to: cuts[i + 2] as number }),
    );
    let first: ScoredHit[];
    try {
      first = this.inline.search(query, k, undefined, { from: 0, to: cuts[1] as number });
    } catch (err) {
      for (const p of parts) p.catch(() => undefined); // nothing left rejecting unseen
      return Promise.reject(err as Error);
    }
    return Promise.all(parts).then((lists) => mergeHits([first, ...lists], k));
  }

  get liveThreads(): number {
    return this.threads.filter((t) => t.alive).length;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((t) => this.retire(t, 'the server is shutting down')));
  }

  private post(t: Thread, query: string, k: number, range: NumRange): Promise<ScoredHit[]> {
    const id = ++this.next;
    return new Promise<ScoredHit[]>((resolve, reject) => {
      t.pending.set(id, { query, k, range, resolve, reject });
      if (t.pending.size === 1) t.worker.ref(); // a search in flight keeps the process alive
      const msg: ToSearchWorker = { id, query, k, range };
      t.worker.postMessage(msg);
    });
  }

  private spawn(init: SearchWorkerInit): Thread {
    const worker = new Worker(workerUrl(), { workerData: init });
    worker.unref();
    const t: Thread = { worker, pending: new Map(), alive: true };
    worker.on('message', (msg: FromSearchWorker) => {
      const p = t.pending.get(msg.id);
      if (!p) return;
      t.pending.delete(msg.id);
      if (t.pending.size === 0) worker.unref();
      if ('error' in msg) {
        p.reject(new RetrieverError(msg.error.code as ErrorCode, msg.error.message));
        return;
      }
      const hits: ScoredHit[] = new Array<ScoredHit>(msg.nums.length);
      for (let i = 0; i < msg.nums.length; i++)
        hits[i] = { num: msg.nums[i] as number, score: msg.scores[i] as number };
      p.resolve(hits);
    });
    worker.on('error', (err) => void this.retire(t, `BM25 search thread failed: ${err.message}`));
    worker.on('exit', (code) => void this.retire(t, `BM25 search thread exited with code ${code}`));
    return t;
  }

  /** Takes a thread out of service; what it still owed is answered inline. */
  private async retire(t: Thread, why: string): Promise<void> {
    if (!t.alive) return;
    t.alive = false;
    if (!this.closed) this.warn(`${why}; its searches run on the main thread`);
    for (const p of t.pending.values()) {
      try {
        p.resolve(this.inline.search(p.query, p.k, undefined, p.range));
      } catch (err) {
        p.reject(err as Error);
      }
    }
    t.pending.clear();
    await t.worker.terminate();
  }
}

/** `parts + 1` cut points splitting [0, n) into `parts` ranges whose sizes differ by at most one. */
export function splitRange(n: number, parts: number): number[] {
  return Array.from({ length: parts + 1 }, (_, i) => Math.floor((n * i) / parts));
}

function workerUrl(): URL {
  return builtFileUrl('./bm25-search-worker.js', import.meta.url);
}

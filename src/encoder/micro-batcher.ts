import { RetrieverError } from '../errors.js';
import { BoundedLru, stringBytes } from '../util/lru.js';
import type { QueryEncoder } from '../core/contracts.js';

export interface MicroBatchOptions {
  /** Most query texts per encoder call. 1 disables batching. */
  maxBatch: number;
  /** How long the first waiting text may wait for company, ms. */
  maxWaitMs: number;
  /** Waiting texts beyond this are refused at once (backpressure). */
  maxQueue: number;
  /** Query vectors kept for repeated queries (0 disables). */
  cacheSize: number;
  /** Heap the kept vectors and their query texts may hold, bytes (default 64 MiB). */
  cacheBytes?: number;
  onBatch?: (size: number) => void;
  onQueue?: (depth: number) => void;
}

interface Waiting {
  text: string;
  resolve: (v: Float32Array) => void;
  reject: (e: Error) => void;
}

/**
 * Gathers concurrent query encodings into one encoder batch: a batch leaves
 * when it is full, when the first text has waited maxWaitMs, or as soon as
 * the previous batch returns (texts that queued meanwhile go together).
 * Identical texts share one vector, and recent vectors are cached, so every
 * corpus built with the same encoder shares the work for a query.
 */
export class MicroBatcher implements QueryEncoder {
  private queue: Waiting[] = [];
  private busy = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly cache: BoundedLru<Float32Array>;

  constructor(
    private readonly inner: QueryEncoder,
    private readonly opts: MicroBatchOptions,
  ) {
    this.cache = new BoundedLru(
      { maxEntries: opts.cacheSize, maxBytes: opts.cacheBytes ?? 64 * 2 ** 20 },
      (text, v) => stringBytes(text) + v.byteLength + 96,
    );
  }

  /** The query-vector cache, for metrics. */
  get vectorCache(): { readonly size: number; readonly bytes: number } {
    return this.cache;
  }

  get id(): string {
    return this.inner.id;
  }

  get dim(): number {
    return this.inner.dim;
  }

  get queueDepth(): number {
    return this.queue.length;
  }

  embedQueries(texts: string[]): Promise<Float32Array[]> {
    const out: Array<Promise<Float32Array>> = [];
    const missing = texts.filter((t) => !this.cache.has(t)).length;
    if (this.queue.length + missing > this.opts.maxQueue) {
      return Promise.reject(
        new RetrieverError(
          'OVERLOADED',
          `the encoder queue is full (${this.queue.length} queries waiting): retry shortly`,
        ),
      );
    }
    for (const text of texts) {
      const hit = this.cache.get(text);
      if (hit) {
        out.push(Promise.resolve(hit));
        continue;
      }
      out.push(new Promise((resolve, reject) => this.queue.push({ text, resolve, reject })));
    }
    this.opts.onQueue?.(this.queue.length);
    this.schedule();
    return Promise.all(out);
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    for (const w of this.queue.splice(0)) w.reject(new RetrieverError('MODEL', 'the encoder is shutting down'));
    await this.inner.close?.();
  }

  private schedule(): void {
    if (this.busy || this.queue.length === 0) return;
    if (this.queue.length >= this.opts.maxBatch || this.opts.maxWaitMs <= 0) {
      clearTimeout(this.timer);
      this.timer = undefined;
      void this.flush();
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.opts.maxWaitMs);
  }

  private async flush(): Promise<void> {
    if (this.busy || this.queue.length === 0) return;
    this.busy = true;
    // up to maxBatch distinct texts; every waiter for one of them rides along
    const byText = new Map<string, Waiting[]>();
    const remaining: Waiting[] = [];
    for (const w of this.queue) {
      const group = byText.get(w.text);
      if (group) group.push(w);
      else if (byText.size < this.opts.maxBatch) byText.set(w.text, [w]);
      else remaining.push(w);
    }
    this.queue = remaining;
    this.opts.onQueue?.(this.queue.length);
    const texts = [...byText.keys()];
    this.opts.onBatch?.(texts.length);
    try {
      const vecs = await this.inner.embedQueries(texts);
      const release: Array<() => void> = [];
      texts.forEach((t, j) => {
        const v = vecs[j] as Float32Array;
        this.remember(t, v);
        for (const w of byText.get(t) as Waiting[]) release.push(() => w.resolve(v));
      });
      releaseInTurns(release);
    } catch (err) {
      for (const group of byText.values()) for (const w of group) w.reject(err as Error);
    } finally {
      this.busy = false;
      // whatever queued during that batch has waited long enough: send it now
      if (this.queue.length > 0) void this.flush();
    }
  }

  private remember(text: string, v: Float32Array): void {
    this.cache.set(text, v);
  }
}

/**
 * Calls one function per event-loop turn. Each waiter's search runs in the
 * microtasks after its release, so a batch of 64 no longer runs 64 searches
 * back to back: I/O (health checks, new requests, cached answers) is served
 * between them.
 */
function releaseInTurns(fns: ReadonlyArray<() => void>, from = 0): void {
  if (from >= fns.length) return;
  (fns[from] as () => void)();
  if (from + 1 < fns.length) setImmediate(() => releaseInTurns(fns, from + 1));
}

import type { SearchResult } from './types.js';

/**
 * LRU of search results keyed by (corpus, mode, top_k, filter, query). RL
 * rollouts repeat queries a lot; indexes never change while served, so
 * entries never go stale. Results are shared: callers must not mutate them.
 */
export class ResultCache {
  private readonly map = new Map<string, SearchResult>();
  hits = 0;
  misses = 0;

  constructor(readonly maxEntries: number) {}

  static key(corpus: string, mode: string, topK: number, filter: string, query: string): string {
    return `${corpus}\u0000${mode}\u0000${topK}\u0000${filter}\u0000${query}`;
  }

  get(key: string): SearchResult | undefined {
    const v = this.map.get(key);
    if (v === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.map.delete(key);
    this.map.set(key, v);
    return v;
  }

  set(key: string, value: SearchResult): void {
    if (this.maxEntries <= 0) return;
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.maxEntries) this.map.delete(this.map.keys().next().value as string);
  }

  get size(): number {
    return this.map.size;
  }
}

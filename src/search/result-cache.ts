import { BoundedLru, stringBytes, type LruLimits } from '../util/lru.js';
import type { SearchHit, SearchResult } from './types.js';

/**
 * LRU of search results keyed by (corpus, mode, top_k, filter, query). RL
 * rollouts repeat queries a lot; indexes never change while served, so
 * entries never go stale. Bounded in entries and in bytes: one top-100 list
 * of 500-word passages holds ≈ 0.6 MB of strings, so a count alone let
 * distinct queries exhaust the heap. Results are shared: callers must not
 * mutate them.
 */
export class ResultCache extends BoundedLru<SearchResult> {
  constructor(limits: LruLimits) {
    super(limits, (key, r) => stringBytes(key) + resultBytes(r));
  }

  static key(corpus: string, mode: string, topK: number, filter: string, query: string): string {
    return `${corpus}\u0000${mode}\u0000${topK}\u0000${filter}\u0000${query}`;
  }
}

/** Heap estimate of a result list: its strings, plus ≈ 200 bytes of object and number slots per hit. */
export function resultBytes(r: SearchResult): number {
  let n = 64;
  for (const h of r.results) n += hitBytes(h);
  return n;
}

function hitBytes(h: SearchHit): number {
  let n = 200 + stringBytes(h.id) + stringBytes(h.doc_id) + stringBytes(h.title) + stringBytes(h.text);
  n += stringBytes(h.contents);
  if (h.metadata) n += stringBytes(JSON.stringify(h.metadata));
  return n;
}

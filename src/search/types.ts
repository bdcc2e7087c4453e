import type { ScoredHit } from './top-k.js';

export const SEARCH_MODES = ['hybrid', 'dense', 'bm25'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

/** A hit as tools and REST return it. Ranks are 1-based; absent when that arm did not return the hit. */
export interface SearchHit {
  rank: number;
  id: string;
  doc_id: string;
  title: string;
  text: string;
  /** The indexed text, FlashRAG style ("Title"\nbody); REST returns it, MCP does not. */
  contents: string;
  score: number;
  bm25_score?: number;
  bm25_rank?: number;
  dense_score?: number;
  dense_rank?: number;
  metadata?: Record<string, unknown>;
}

export interface SearchResult {
  corpus: string;
  mode: SearchMode;
  results: SearchHit[];
}

/**
 * The chunks a metadata filter allows: a bitset over chunk nums for O(1)
 * membership, and the sorted nums themselves for exact search over few chunks.
 */
export interface ChunkFilter {
  bits: Uint8Array;
  nums: Uint32Array;
}

export function isAllowed(f: ChunkFilter, num: number): boolean {
  return (((f.bits[num >>> 3] as number) >>> (num & 7)) & 1) === 1;
}

/** The dense arm of one corpus: nearest chunks to a query vector. */
export interface DenseArm {
  /** Identity of the encoder the vectors were built with (must match the query encoder). */
  readonly encoderId: string;
  search(query: Float32Array, k: number, filter?: ChunkFilter): ScoredHit[];
  /** `search` for each query; an ANN arm walks the graph for all of them on several threads. */
  searchMany(queries: readonly Float32Array[], k: number, filter?: ChunkFilter): ScoredHit[][];
  close(): void;
}

/** Turns query strings into vectors; shared by every corpus built with the same encoder. */
export interface QueryEncoder {
  readonly id: string;
  readonly dim: number;
  embedQueries(texts: string[]): Promise<Float32Array[]>;
  close?(): Promise<void>;
}

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
  /** In a search of several corpora: the corpus the hit is from. */
  corpus?: string;
}

export interface SearchResult {
  corpus: string;
  mode: SearchMode;
  results: SearchHit[];
  /** With a filter: how many passages it allows (0 means the filter itself excluded everything). */
  filter_matches?: number;
  /**
   * Why the answer ran in another mode than the corpus's usual default: the dense arm of a first
   * build is still being embedded, so a search that named no mode ran in BM25.
   */
  note?: string;
}

/**
 * Hears the bytes of each result list's passages (text and title) as they are read, before an
 * answer is built from them: the server counts them against the answer's memory lease, and
 * throws to refuse an answer whose passages are far larger than the corpus's average.
 */
export type AnswerMeter = (passageBytes: number, hits: number) => void;

/**
 * The contracts every layer shares, and nothing else: what a search arm, a
 * query encoder, a token counter and a metadata filter are. This layer
 * imports nothing of ours but top-k.ts, so index/, encoder/ and ingest/
 * can all depend on it without reaching up into search/.
 */
import type { ScoredHit } from './top-k.js';

export const CORPUS_FORMATS = ['wiki18', 'kilt', 'jsonl', 'beir', 'multihop', 'graphrag', 'files'] as const;
export type CorpusFormat = (typeof CORPUS_FORMATS)[number];

/** Where an encoder's files came from, as a manifest records it. */
/**
 * Where an encoder's files came from. A hub source records the commit its
 * files were taken at, so a server for that index finds them in the cache
 * (or fetches that very commit) without asking the hub what `revision` means now.
 */
export type EncoderSource =
  { kind: 'local'; path: string } | { kind: 'hub'; repo: string; revision: string; commit?: string };

/** How the chunker counts tokens; a word may be several tokens (WordPiece). */
export interface TokenCounter {
  /** Recorded in the manifest: "words" or "wordpiece:<model>". */
  readonly id: string;
  /** Words of `text` with their token counts, in order. */
  words(text: string): Array<{ start: number; end: number; tokens: number }>;
  /** Total tokens of `text` (the sum over words(text)), without building spans. */
  count(text: string): number;
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
  /** The index's kind and the settings it searches with, as the start-up log and list_corpora name them. */
  readonly description: string;
  search(query: Float32Array, k: number, filter?: ChunkFilter): ScoredHit[];
  /** `search` for each query; an ANN arm walks the graph for all of them on several threads. */
  searchMany(queries: readonly Float32Array[], k: number, filter?: ChunkFilter): ScoredHit[][];
  /** Stored rows the last `search` read to re-score its candidates, where the arm counts them. */
  readonly lastRescored?: number;
  close(): void;
}

/** Turns query strings into vectors; shared by every corpus built with the same encoder. */
export interface QueryEncoder {
  readonly id: string;
  readonly dim: number;
  embedQueries(texts: string[]): Promise<Float32Array[]>;
  close?(): Promise<void>;
}

/**
 * Where an encoder call's time went, seconds: the tokenizer, the model run,
 * pooling and normalising, and the round trip to where the model runs (a
 * thread or a process) and back, the rest of the call.
 */
export interface EncodeTiming {
  tokenize: number;
  run: number;
  pool: number;
  hop: number;
}

import { RetrieverError } from '../errors.js';
import type { ScoredHit } from '../core/top-k.js';
import type { Manifest } from '../index/manifest.js';
import type { ChunkRecord, Facets } from '../store/chunk-store.js';
import type { ParsedFilter } from './filters.js';
import type { OpenCorpus } from './open-corpus.js';
import type { SearchMode } from './types.js';

/**
 * A corpus served from a distributed search engine instead of local files
 * (`--backend URL`). The engine holds the chunks, their metadata and vectors;
 * the Retriever still encodes queries and fuses the arms with its own RRF, so
 * answers have the same shape and ranking rule as an embedded corpus.
 * Implemented in engine/, wired in app/: search/ knows only this contract.
 */
export interface EngineCorpus {
  readonly kind: 'engine';
  readonly name: string;
  /** The manifest of the build that was pushed, kept in the engine (encoder identity included). */
  readonly manifest: Manifest;
  readonly modes: SearchMode[];
  /** Where the engine is, for logs and list_corpora (no credentials). */
  readonly location: string;
  facets(): Facets;
  /**
   * Each requested arm's `depth` best chunks for one query, with the filter
   * applied inside both arms, and the records of every chunk returned.
   */
  searchArms(q: EngineQuery): Promise<EngineArms>;
  /** Chunks by id (those that exist). */
  getChunksById(ids: readonly string[]): Promise<ChunkRecord[]>;
  /** A document's chunks with from ≤ position ≤ to, in order. */
  getDocumentRange(docId: string, from: number, to: number): Promise<ChunkRecord[]>;
  /** A document's first `limit` chunks, in order. */
  getDocumentChunks(docId: string, limit: number): Promise<ChunkRecord[]>;
  /** Why the engine cannot be reached now (a short probe, cached a second), or undefined when it can: for /ready. */
  unreachable(): Promise<string | undefined>;
  close(): Promise<void>;
}

export interface EngineQuery {
  text: string;
  /** The query vector for the dense arm; null for BM25 only. */
  vector: Float32Array | null;
  arms: ReadonlyArray<'bm25' | 'dense'>;
  depth: number;
  filter?: ParsedFilter;
}

export interface EngineArms {
  bm25?: ScoredHit[];
  dense?: ScoredHit[];
  /** Every returned chunk by num. */
  records: Map<number, ChunkRecord>;
  /** With a filter: how many chunks it allows. */
  filterMatches?: number;
}

/** What a server serves: a corpus on local files, or one in an engine. */
export type ServedCorpus = OpenCorpus | EngineCorpus;

/** The local corpus, or an error saying that `what` needs local index files. */
export function localOnly(c: ServedCorpus, what: string): OpenCorpus {
  if (c.kind === 'local') return c;
  throw new RetrieverError(
    'BAD_INPUT',
    `${what} needs the local index files, but corpus ${c.name} is served from ${c.location}: run it against the local index (without --backend)`,
  );
}

import type { Metadata } from '../store/chunk-store.js';

/** One document as a reader yields it, before chunking. */
export interface SourceDocument {
  id: string;
  title: string;
  /** The body to chunk (without the title). */
  text: string;
  metadata?: Metadata;
  /**
   * For one-passage-per-record formats (wiki-18): the exact text to index and
   * embed, kept verbatim so vectors match published indexes built from it.
   */
  verbatim?: { contents: string; bodyStart: number };
}

export interface ReadProgress {
  bytesRead: number;
  totalBytes: number;
}

export type ProgressCallback = (p: ReadProgress) => void;

export interface ReadOptions {
  onProgress?: ProgressCallback;
  /** Receives every byte of the file as stored on disk (the source fingerprint). */
  hash?: { update(data: Uint8Array): unknown };
  /** Called for each record that had no id and was numbered by its position instead. */
  onMissingId?: (where: string) => void;
  /** Called for each record whose strings held lone surrogates (replaced by U+FFFD, see readers.ts). */
  onIllFormed?: (where: string) => void;
}

import type { FolderOptions, Skipped } from './files/walk.js';
import type { Metadata, StoredDocument } from '../store/chunk-store.js';

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
  /**
   * A record cut into its passages by the reader's own convention (KILT's pages into 100-word
   * passages, as DPR cut wiki-18): each is a chunk as given, in order.
   */
  passages?: Array<{ contents: string; bodyStart: number }>;
  /**
   * A file's structure (folder corpora): where headings start sections and,
   * for a PDF, where each page starts, as UTF-16 offsets in `text`. The
   * chunker breaks at headings and paragraphs and records each chunk's pages.
   */
  structure?: { sections: number[]; pages?: number[] };
  /** A folder's file: its size and modification time when listed (the store keeps them for the next build). */
  stamp?: { bytes: number; mtimeMs: number };
  /** The document as the previous build stored it, taken over because its file is unchanged: no text to chunk. */
  reused?: StoredDocument;
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
  /** The `files` format: which files of the folder to read (walk.ts's defaults otherwise). */
  folder?: FolderOptions;
  /** The `files` format: a file that was not indexed, and why. */
  onSkipped?: (s: Skipped) => void;
  /** The `files` format: files of kinds it does not read, counted by extension. */
  onPassedOver?: (byExtension: Record<string, number>) => void;
  /** The `files` format: a stop, heard between files and inside a PDF. */
  signal?: AbortSignal;
  /** The `files` format: the previous build's copy of an unchanged file (same size and modification time), if it has one. */
  reuse?: (docId: string, bytes: number, mtimeMs: number) => StoredDocument | undefined;
}

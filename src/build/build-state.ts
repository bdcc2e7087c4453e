import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RetrieverError } from '../errors.js';
import type { Bm25Params } from '../index/bm25/scoring.js';
import type { Bm25BuildStats } from '../index/bm25/bm25-builder.js';
import type { CorpusFormat } from '../core/contracts.js';
import type { Logger } from '../util/log.js';
import { INDEX_FORMAT_VERSION } from '../version.js';

/**
 * What survives an interrupted build: `build-state.json` in the partial
 * directory records the finished text phase under a key of everything that
 * changes its result, so `--resume` skips it only for the same input and options.
 */
export const STATE_FILE = 'build-state.json';

export interface IngestResult {
  documents: number;
  chunks: number;
  tokens: number;
  /** What `tokens` counts: the chunker's tokenizer when documents were split, else BERT words. */
  tokenizer: string;
  sourceSha256: string;
  bm25: Bm25BuildStats;
  /** A folder corpus's files that were not indexed (the first MAX_SKIPPED_LISTED), with why. */
  skipped?: { count: number; files: Array<{ path: string; reason: string }> };
}

/** Skipped files a manifest and a build summary list by name; the rest are counted. */
export const MAX_SKIPPED_LISTED = 100;

export interface BuildState {
  key: string;
  ingest?: IngestResult;
}

/** The options that change a build's result, as stateKey reads them. */
export interface StateKeyOptions {
  format: CorpusFormat;
  chunkSize: number;
  chunkOverlap: number;
  chunkUnit?: 'model' | 'words';
  bm25: Bm25Params;
  /** The dense phase's fingerprint, or null for a BM25-only build. */
  dense: string | null;
  /** A folder corpus's file selection. */
  folder?: unknown;
}

/** A corpus file's size and modification time, or a folder's stamp (ingest/readers.ts describeSource). */
export type SourceStamp = { size: number; mtime: number } | { stamp: string };

/** Everything that changes the result of the text phase, and the dense settings. */
export function stateKey(opts: StateKeyOptions, input: string, source: SourceStamp): string {
  return JSON.stringify({
    v: INDEX_FORMAT_VERSION,
    input,
    // a file's size and time as before, so a build interrupted by an older version still resumes
    ...('size' in source ? { size: source.size, mtime: source.mtime } : { source: source.stamp }),
    format: opts.format,
    chunk:
      opts.chunkUnit === 'words' ? [opts.chunkSize, opts.chunkOverlap, 'words'] : [opts.chunkSize, opts.chunkOverlap],
    bm25: opts.bm25,
    dense: opts.dense,
    ...(opts.folder !== undefined ? { folder: opts.folder } : {}),
  });
}

export function loadState(dir: string, key: string, log: Logger): BuildState {
  const path = join(dir, STATE_FILE);
  if (!existsSync(path)) return { key };
  const state = JSON.parse(readFileSync(path, 'utf8')) as BuildState;
  if (state.key !== key) {
    throw new RetrieverError(
      'BAD_INPUT',
      `the interrupted build in ${dir} used another input or other options: rerun without --resume to start over`,
    );
  }
  log.info(`resuming the interrupted build in ${dir}`);
  return state;
}

import { existsSync, readFileSync, statSync } from 'node:fs';
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
}

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
}

/** Everything that changes the result of the text phase, and the dense settings. */
export function stateKey(opts: StateKeyOptions, input: string): string {
  let st: { size: number; mtimeMs: number };
  try {
    st = statSync(input);
  } catch (err) {
    throw new RetrieverError('BAD_INPUT', `cannot read input ${input}: ${(err as Error).message}; check --input`, {
      cause: err,
    });
  }
  return JSON.stringify({
    v: INDEX_FORMAT_VERSION,
    input,
    size: st.size,
    mtime: Math.floor(st.mtimeMs),
    format: opts.format,
    chunk:
      opts.chunkUnit === 'words' ? [opts.chunkSize, opts.chunkOverlap, 'words'] : [opts.chunkSize, opts.chunkOverlap],
    bm25: opts.bm25,
    dense: opts.dense,
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

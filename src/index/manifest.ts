import type { EncoderSource, CorpusFormat } from '../core/contracts.js';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describeValue, RetrieverError } from '../errors.js';
import { fileProblem, readRegularFile } from '../util/regular-file.js';
import { INDEX_FORMAT_VERSION, IVF_INDEX_FORMAT, READABLE_INDEX_FORMATS } from '../version.js';
import { INDEX_FILES } from './layout.js';

/** The largest manifest.json read: a few KB, plus a 16-digit hash per 64 MiB block of each file (≈ 20 KB at wiki-18). */
export const MAX_MANIFEST_BYTES = 16 * 2 ** 20;

/** The files a manifest may list: an index's own, each in its directory (never `../x`). */
const INDEX_FILE_NAMES: ReadonlySet<string> = new Set(
  Object.values(INDEX_FILES).filter((f) => f !== INDEX_FILES.manifest),
);

export interface FileRecord {
  bytes: number;
  sha256: string;
  /** sha256 (first 16 hex digits) of each 64 MiB block, for quick spot checks. */
  blocks?: string[];
}

/** Where a server finds the encoder an index was built with. */

export interface DenseManifest {
  encoder: {
    /** "model (variant)", e.g. "intfloat/e5-base-v2 (onnx/model.onnx)". */
    id: string;
    model: string;
    variant: string;
    model_sha256: string;
    /** sha256 of tokenizer.json: the same ONNX file with other token ids gives other vectors (absent before 0.1.0's last builds). */
    tokenizer_sha256?: string;
    dim: number;
    query_prefix: string;
    passage_prefix: string;
    pooling: 'mean' | 'cls';
    normalize: boolean;
    max_length: number;
    source: EncoderSource;
  };
  vectors: { dtype: 'f32' | 'f16'; count: number };
  /**
   * What the encoder saw of each chunk: its stored `contents`, or `title-body`
   * (ingest/dense-text.ts). Absent in indexes built before 2026-11-27: `contents`.
   */
  text?: 'contents' | 'title-body';
  /** null: the corpus is small enough to search exactly. */
  ann: HnswManifest | IvfManifest | null;
}

/** An HNSW graph (USearch, `dense.usearch`). */
export interface HnswManifest {
  library: 'usearch';
  metric: 'cos';
  quantization: 'f32' | 'f16' | 'i8';
  connectivity: number;
  expansion_add: number;
  expansion_search: number;
}

/** An IVF index of 1-bit RaBitQ codes (`dense.ivf`, index/dense/ivf-format.ts), re-scored from the vectors. */
export interface IvfManifest {
  library: 'retriever-mcp';
  kind: 'ivf-rabitq';
  metric: 'cos';
  lists: number;
  /** Code bits a dimension. */
  bits: 1;
  /** Lists probed a query, and candidates re-scored, unless the server says otherwise. */
  probes: number;
  rescore: number;
}

export interface Manifest {
  format_version: number;
  tool_version: string;
  build_id: string;
  built_at: string;
  build_seconds: number;
  rebuild_command: string;
  corpus: {
    name: string;
    format: CorpusFormat;
    source: { path: string; bytes: number; sha256: string };
    documents: number;
    chunks: number;
    tokens: number;
    /** A folder corpus's files that were not indexed (the first 100), with why. */
    skipped?: { count: number; files: Array<{ path: string; reason: string }> };
  };
  chunker: { size: number; overlap: number; tokenizer: string };
  bm25: {
    analyzer: string;
    k1: number;
    b: number;
    doc_count: number;
    total_tokens: number;
    terms: number;
    postings: number;
  };
  dense: DenseManifest | null;
  files: Record<string, FileRecord>;
}

/**
 * Reads and checks an index's manifest.json: the format version must be ours
 * and every file it lists must exist with the recorded size. Errors name the
 * file and the command that fixes it.
 */
export function readManifest(dir: string, fixHint: string): Manifest {
  const path = join(dir, INDEX_FILES.manifest);
  if (!existsSync(path)) {
    throw new RetrieverError('INDEX_MISSING', `no index at ${dir} (missing ${INDEX_FILES.manifest}): ${fixHint}`);
  }
  const bytes = readRegularFile(
    path,
    { within: dir, maxBytes: MAX_MANIFEST_BYTES },
    (problem) => new RetrieverError('INDEX_CORRUPT', `${path} ${problem}: ${fixHint}`),
  );
  let m: Manifest;
  try {
    m = JSON.parse(bytes.toString('utf8')) as Manifest;
  } catch (err) {
    throw new RetrieverError('INDEX_CORRUPT', `${path} is not valid JSON: ${fixHint}`, { cause: err });
  }
  if (typeof m !== 'object' || m === null || typeof m.format_version !== 'number') {
    throw new RetrieverError('INDEX_CORRUPT', `${path} is not a retriever-mcp manifest: ${fixHint}`);
  }
  // the index's own rebuild command, once the manifest that records it could be read
  const hint =
    typeof m.rebuild_command === 'string' && m.rebuild_command !== ''
      ? `rebuild it with \`${m.rebuild_command}\``
      : fixHint;
  if (!READABLE_INDEX_FORMATS.includes(m.format_version)) {
    throw new RetrieverError(
      'INDEX_INCOMPATIBLE',
      `${path}: index format ${m.format_version} (built by retriever-mcp ${m.tool_version}) but this server reads formats ${READABLE_INDEX_FORMATS.join(', ')} (it builds ${INDEX_FORMAT_VERSION}, ${IVF_INDEX_FORMAT} with an IVF index): ${hint}`,
    );
  }
  for (const [name, rec] of Object.entries(m.files ?? {})) {
    if (!INDEX_FILE_NAMES.has(name)) {
      throw new RetrieverError(
        'INDEX_CORRUPT',
        `${path} lists a file ${describeValue(name)}, which is none of an index's own (${[...INDEX_FILE_NAMES].join(', ')}): ${hint}`,
      );
    }
    const file = join(dir, name);
    const problem = fileProblem(file, { within: dir });
    if (problem) {
      throw new RetrieverError('INDEX_CORRUPT', `${file} ${problem} (listed in the manifest): ${hint}`);
    }
    const size = statSync(file).size;
    if (size !== rec.bytes) {
      throw new RetrieverError(
        'INDEX_CORRUPT',
        `${file} is ${size} bytes but the manifest says ${rec.bytes} (truncated or modified): ${hint}`,
      );
    }
  }
  return m;
}

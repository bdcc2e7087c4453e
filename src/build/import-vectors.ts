import { RetrieverError } from '../errors.js';
import type { Encoder } from '../encoder/encoder.js';
import { openVectorSource, type VectorFileFormat } from '../index/dense/vector-source.js';
import type { VectorWriter } from '../index/dense/vectors-file.js';
import { ChunkStore } from '../store/chunk-store.js';
import type { Logger } from '../util/log.js';
import { createProgress, formatCount } from '../util/progress.js';

export interface VectorImport {
  path: string;
  format?: VectorFileFormat;
  /** Rows re-embedded with our encoder and compared (cosine ≥ minCosine); 0 skips the check. */
  spotCheck: number;
  minCosine: number;
}

const BATCH = 8192;

/**
 * Copies published embeddings (e.g. Search-R1's e5_Flat.index) into the
 * index instead of re-encoding: row i must be chunk i (wiki-18 line i). Rows
 * are checked for count and dimension, re-normalised (IP on unit vectors is
 * the cosine), and optionally spot-checked against our own encoder.
 */
export async function importVectors(
  imp: VectorImport,
  encoder: Encoder,
  writer: VectorWriter,
  chunkCount: number,
  storePath: string,
  log: Logger,
  progressEnabled: boolean,
): Promise<void> {
  const src = openVectorSource(imp.path, imp.format);
  try {
    if (src.count !== chunkCount) {
      throw new RetrieverError(
        'BAD_INPUT',
        `${imp.path} holds ${src.count} vectors but the corpus has ${chunkCount} chunks: row i must embed chunk i (use the index built from this exact corpus file)`,
      );
    }
    if (src.dim !== encoder.dim) {
      throw new RetrieverError(
        'BAD_INPUT',
        `${imp.path} holds ${src.dim}-d vectors but the encoder ${encoder.id} produces ${encoder.dim}-d: pass the model the vectors were made with (--model/--model-path)`,
      );
    }
    if (imp.spotCheck > 0) await spotCheck(imp, src, encoder, storePath, log);
    const progress = createProgress({
      label: 'import vectors',
      total: chunkCount,
      unit: 'vectors',
      enabled: progressEnabled,
      initial: writer.count,
    });
    let renormalised = 0;
    // the disk reads the next batch and writes the last one while this thread normalises and
    // converts the current one (the import is I/O-bound: ≈ 3 KB in and 1.5 KB out per vector)
    const batchAt = (start: number): Promise<Float32Array> | null =>
      start < chunkCount ? src.readAsync(start, Math.min(BATCH, chunkCount - start)) : null;
    let next = batchAt(writer.count);
    let writing: Promise<void> = Promise.resolve();
    try {
      for (let start = writer.count; next; start += BATCH) {
        const rows = await next;
        next = batchAt(start + BATCH);
        const n = rows.length / src.dim;
        const vecs: Float32Array[] = [];
        for (let i = 0; i < n; i++) {
          const v = rows.subarray(i * src.dim, (i + 1) * src.dim);
          if (normalizeInPlace(v)) renormalised++;
          vecs.push(v);
        }
        await writing;
        progress.update(writer.count);
        writing = writer.appendAsync(vecs);
      }
      await writing;
      progress.update(writer.count);
      progress.finish();
    } finally {
      // settle what is still in flight before the file is closed (an error leaves it unseen otherwise)
      await Promise.allSettled([next, writing]);
      progress.close();
    }
    if (renormalised > 0)
      log.warn(`${formatCount(renormalised)} imported vectors were not unit length and were normalised`);
  } finally {
    src.close();
  }
}

/** Scales v to unit length; true when it was off by more than 1e-3. */
function normalizeInPlace(v: Float32Array): boolean {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += (v[i] as number) * (v[i] as number);
  const norm = Math.sqrt(s);
  if (norm === 0) return false;
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / norm;
  return Math.abs(norm - 1) > 1e-3;
}

async function spotCheck(
  imp: VectorImport,
  src: { count: number; dim: number; read(from: number, n: number): Float32Array },
  encoder: Encoder,
  storePath: string,
  log: Logger,
): Promise<void> {
  const store = new ChunkStore(storePath);
  try {
    const step = Math.max(1, Math.floor(src.count / imp.spotCheck));
    const rows = Array.from({ length: Math.min(imp.spotCheck, src.count) }, (_, i) => i * step);
    const texts = rows.map((r) => store.contentsRange(r, r + 1)[0] as string);
    const ours = await encoder.embedPassages(texts);
    let worst = 1;
    rows.forEach((r, i) => {
      const theirs = src.read(r, 1);
      normalizeInPlace(theirs);
      const mine = ours[i] as Float32Array;
      let dot = 0;
      for (let d = 0; d < src.dim; d++) dot += (theirs[d] as number) * (mine[d] as number);
      worst = Math.min(worst, dot);
    });
    log.info(`spot check: ${rows.length} rows re-embedded with ${encoder.id}; lowest cosine ${worst.toFixed(4)}`);
    if (worst < imp.minCosine) {
      throw new RetrieverError(
        'BAD_INPUT',
        `imported vectors disagree with ${encoder.id}: lowest cosine ${worst.toFixed(4)} < ${imp.minCosine} over ${rows.length} rows; the file was made with another model, prefix or corpus order`,
      );
    }
  } finally {
    store.close();
  }
}

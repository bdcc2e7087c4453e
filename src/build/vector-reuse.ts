import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { EncoderSettings } from '../encoder/encoder.js';
import { VectorReader, type VectorDtype } from '../index/dense/vectors-file.js';
import { INDEX_FILES } from '../index/layout.js';
import { readManifest, type Manifest } from '../index/manifest.js';
import { denseText, type DenseTextRule } from '../ingest/dense-text.js';
import { ChunkStore } from '../store/chunk-store.js';
import type { Logger } from '../util/log.js';
import { formatCount } from '../util/progress.js';

/**
 * The vectors of the index being replaced, found by the text the encoder
 * saw: a rebuild embeds only chunks whose text is new, wherever in the
 * corpus a chunk moved. Reuse needs the same model file, tokenizer and every
 * setting that changes a vector; any difference and every chunk is embedded.
 *
 * Keys are 96 bits of SHA-256 of the embedded text (a collision among 21M
 * chunks: about 1 in 10^14), in an open-addressed table of typed arrays:
 * 16 bytes a slot, 0.5 GB for wiki-18, where a Map of strings took 3 GB.
 */
export class VectorReuse {
  private constructor(
    private readonly keys: Uint32Array,
    private readonly rows: Int32Array,
    private readonly mask: number,
    private readonly reader: VectorReader,
  ) {}

  /** Chunks re-used and embedded so far. */
  reused = 0;
  embedded = 0;

  /**
   * The previous build of this corpus at `dir`, if its vectors can stand in
   * for this build's; else undefined, with the reason logged.
   */
  static open(dir: string, want: ReuseSettings, log: Logger): VectorReuse | undefined {
    if (!existsSync(join(dir, INDEX_FILES.manifest))) return undefined;
    let m: Manifest;
    try {
      m = readManifest(dir, 'every chunk is embedded');
    } catch (err) {
      log.warn(`the previous index cannot lend its vectors (${(err as Error).message})`);
      return undefined;
    }
    const why = mismatch(m, want);
    if (why) {
      log.info(`the previous index's vectors were made ${why}: every chunk is embedded`);
      return undefined;
    }
    const n = (m.dense as NonNullable<Manifest['dense']>).vectors.count;
    let reuse: VectorReuse;
    try {
      reuse = VectorReuse.load(dir, n, want);
    } catch (err) {
      log.warn(`the previous index cannot lend its vectors (${(err as Error).message}): every chunk is embedded`);
      return undefined;
    }
    log.info(`the previous index lends the vectors of ${formatCount(n)} chunks: only new or changed text is embedded`);
    return reuse;
  }

  /** The table of the previous index's `n` chunks, by the text each was embedded from. */
  private static load(dir: string, n: number, want: ReuseSettings): VectorReuse {
    const cap = 2 ** Math.ceil(Math.log2(Math.max(16, n * 1.5)));
    const reader = new VectorReader(join(dir, INDEX_FILES.vectors), want.dim, want.dtype, n);
    const reuse = new VectorReuse(new Uint32Array(cap * 3), new Int32Array(cap).fill(-1), cap - 1, reader);
    const store = new ChunkStore(join(dir, INDEX_FILES.store));
    try {
      for (let from = 0; from < n; from += 4096) {
        const passages = store.passagesRange(from, Math.min(n, from + 4096));
        passages.forEach((p, i) => reuse.insert(textKey(denseText(want.text, p.contents, p.bodyStart)), from + i));
      }
      return reuse;
    } catch (err) {
      reader.close();
      throw err;
    } finally {
      store.close();
    }
  }

  /** The previous vector of a chunk with exactly this embedded text, or undefined. */
  lookup(text: string): Float32Array | undefined {
    const k = textKey(text);
    for (let s = (k[0] as number) & this.mask; ; s = (s + 1) & this.mask) {
      const row = this.rows[s] as number;
      if (row < 0) return undefined;
      if (this.keys[s * 3] === k[0] && this.keys[s * 3 + 1] === k[1] && this.keys[s * 3 + 2] === k[2]) {
        return this.reader.row(row).slice();
      }
    }
  }

  close(): void {
    this.reader.close();
  }

  private insert(k: Uint32Array, row: number): void {
    for (let s = (k[0] as number) & this.mask; ; s = (s + 1) & this.mask) {
      const at = this.rows[s] as number;
      if (at < 0) {
        this.keys.set(k, s * 3);
        this.rows[s] = row;
        return;
      }
      // the same text twice: either row serves
      if (this.keys[s * 3] === k[0] && this.keys[s * 3 + 1] === k[1] && this.keys[s * 3 + 2] === k[2]) return;
    }
  }
}

/** Everything that makes a vector what it is, besides the text. */
export interface ReuseSettings {
  settings: EncoderSettings;
  dim: number;
  dtype: VectorDtype;
  text: DenseTextRule;
}

function mismatch(m: Manifest, want: ReuseSettings): string | undefined {
  const d = m.dense;
  if (!d) return 'by no encoder (a BM25-only index)';
  const e = d.encoder;
  const s = want.settings;
  if (e.model_sha256 !== s.modelSha256) return 'by another model file';
  if (e.tokenizer_sha256 !== s.tokenizerSha256) return 'with another tokenizer';
  if (e.dim !== want.dim) return `at ${e.dim} dimensions`;
  if (e.passage_prefix !== s.passagePrefix) return `with the passage prefix ${JSON.stringify(e.passage_prefix)}`;
  if (e.pooling !== s.pooling || e.normalize !== s.normalize) return 'with other pooling';
  if (e.max_length !== s.maxLength) return `at --max-length ${e.max_length}`;
  if (d.vectors.dtype !== want.dtype) return `as ${d.vectors.dtype}`;
  if (d.text !== want.text) return `of each chunk's ${d.text}`;
  return undefined;
}

function textKey(text: string): Uint32Array {
  const h = createHash('sha256').update(text).digest();
  return new Uint32Array([h.readUInt32LE(0), h.readUInt32LE(4), h.readUInt32LE(8)]);
}

import { RetrieverError } from '../errors.js';
import type { ModelFiles } from './model-files.js';
import { planBatches } from './batch-plan.js';
import { openFastSession } from './fast-session.js';
import type { Device, OnnxSession } from './onnx-session.js';
import { clsPool, l2Normalize, meanPool } from './pooling.js';
import { WordPieceTokenizer } from './wordpiece.js';

export type Pooling = 'mean' | 'cls';

/** Thrown by `EmbedCore.embed` when its caller cancelled the request between batches. */
export class EmbedCancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

export interface EmbedCoreOptions {
  device: Device;
  threads: number;
  maxLength: number;
  batchSize: number;
  /** Padded ÷ real tokens a batch may reach (`planBatches`). */
  maxPadding: number;
  /** Fuse attention when the graph allows it and the result agrees (`openFastSession`). */
  fuseAttention: boolean;
  pooling: Pooling;
}

/**
 * tokenize → run → pool → normalise, with length bucketing: texts are sorted
 * by token count and cut into batches of similar length (`planBatches`),
 * each padded only to its own longest text.
 * Runs wherever the session lives (the encoder worker thread).
 */
export class EmbedCore {
  private constructor(
    private readonly session: OnnxSession,
    readonly tokenizer: WordPieceTokenizer,
    readonly dim: number,
    /** "sentence_embedding" when the graph pools itself, else the token output. */
    readonly output: string,
    /** What the session runs: the fused graph or the file as published, and why (`openFastSession`). */
    readonly graph: string,
    private readonly opts: EmbedCoreOptions,
  ) {}

  static async open(files: ModelFiles, opts: EmbedCoreOptions): Promise<EmbedCore> {
    const tokenizer = WordPieceTokenizer.fromFile(files.tokenizer, files.vocabSize);
    const { session, graph } = await openFastSession(
      files,
      { device: opts.device, threads: opts.threads },
      tokenizer,
      opts.fuseAttention,
    );
    const names = session.outputNames;
    const output = names.includes('sentence_embedding')
      ? 'sentence_embedding'
      : names.includes('last_hidden_state')
        ? 'last_hidden_state'
        : (names[0] as string);
    const core = new EmbedCore(session, tokenizer, files.hiddenSize, output, graph, opts);
    // warm-up: first run allocates and optimises; also checks the real output width
    const [probe] = await core.embed(['warm up']);
    if (!probe || probe.length !== files.hiddenSize) {
      throw new RetrieverError(
        'MODEL',
        `model output has ${probe?.length} dimensions but config.json says hidden_size ${files.hiddenSize}`,
      );
    }
    return core;
  }

  /**
   * Unit vectors for already-prefixed texts, in input order. `cancelled` is
   * asked before each batch: a stopped build waits for one batch, not for a
   * whole window of thousands of passages. `onBatch` hears how many texts are
   * done after each batch (a build's progress).
   */
  async embed(
    texts: readonly string[],
    cancelled?: () => boolean,
    onBatch?: (textsDone: number) => void,
  ): Promise<Float32Array[]> {
    const encoded = texts.map((t) => this.tokenizer.encode(t, this.opts.maxLength).ids);
    const order = encoded
      .map((_, i) => i)
      .sort((a, b) => (encoded[a] as number[]).length - (encoded[b] as number[]).length || a - b);
    const out: Float32Array[] = new Array<Float32Array>(texts.length);
    const lengths = order.map((i) => (encoded[i] as number[]).length);
    let start = 0;
    for (const end of planBatches(lengths, this.opts.batchSize, this.opts.maxPadding)) {
      if (cancelled?.()) throw new EmbedCancelled();
      const idx = order.slice(start, end);
      const vecs = await this.runBatch(idx.map((i) => encoded[i] as number[]));
      idx.forEach((i, j) => (out[i] = vecs[j] as Float32Array));
      start = end;
      onBatch?.(end);
    }
    return out;
  }

  async close(): Promise<void> {
    await this.session.close();
  }

  private async runBatch(rows: number[][]): Promise<Float32Array[]> {
    const batch = rows.length;
    const seqLen = Math.max(...rows.map((r) => r.length));
    const ids = new BigInt64Array(batch * seqLen);
    const mask = new BigInt64Array(batch * seqLen);
    const maskNum = new Uint8Array(batch * seqLen);
    rows.forEach((r, b) => {
      for (let t = 0; t < r.length; t++) {
        ids[b * seqLen + t] = BigInt(r[t] as number);
        mask[b * seqLen + t] = 1n;
        maskNum[b * seqLen + t] = 1;
      }
    });
    const res = await this.session.run(ids, mask, batch, seqLen, this.output);
    let vecs: Float32Array[];
    if (this.output === 'sentence_embedding') {
      vecs = rows.map((_, b) => res.data.slice(b * this.dim, (b + 1) * this.dim));
    } else {
      const dim = res.dims[2] as number;
      vecs =
        this.opts.pooling === 'cls'
          ? clsPool(res.data, batch, seqLen, dim)
          : meanPool(res.data, maskNum, batch, seqLen, dim);
    }
    return vecs.map(l2Normalize);
  }
}

import { RetrieverError } from '../errors.js';
import type { ModelFiles } from './model-files.js';
import { planBatches } from './batch-plan.js';
import { openFastSession } from './fast-session.js';
import type { Device, OnnxSession } from './onnx-session.js';
import { clsPool, l2Normalize, meanPool } from './pooling.js';
import { WordPieceTokenizer } from './wordpiece.js';

export type Pooling = 'mean' | 'cls';

/** Thrown by `EmbedCore.embed` when its caller cancelled the request between batches. */
/** Milliseconds an embed call spent in each step, added to as it goes. */
export interface CoreTiming {
  tokenize: number;
  run: number;
  pool: number;
}

export class EmbedCancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

/**
 * A build's window of passages embedded batch by batch: each batch (numbered in the plan, which
 * depends only on the texts) is heard as it is done, and batches already done are not run again,
 * so a stopped build keeps all but the batch in flight and a resumed one writes the same vectors.
 */
export interface BatchStream {
  skip?: ReadonlySet<number>;
  onVectors(batch: number, rows: readonly number[], vectors: readonly Float32Array[]): void;
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
    /** The graph quantizes activations per run: queries then run one a run (`embed`). */
    readonly quantizesPerRun: boolean,
  ) {}

  static async open(files: ModelFiles, opts: EmbedCoreOptions): Promise<EmbedCore> {
    const tokenizer = WordPieceTokenizer.fromFile(files.tokenizer, files.vocabSize);
    const { session, graph, quantizesPerRun } = await openFastSession(
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
    const core = new EmbedCore(session, tokenizer, files.hiddenSize, output, graph, opts, quantizesPerRun);
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
   * done after each batch (a build's progress). `queries` runs each text alone
   * where the graph quantizes per run, so a query's vector is the same bytes
   * whoever else asked at that moment.
   */
  async embed(
    texts: readonly string[],
    cancelled?: () => boolean,
    onBatch?: (textsDone: number) => void,
    timing?: CoreTiming,
    queries = false,
    stream?: BatchStream,
  ): Promise<Float32Array[]> {
    const t = performance.now();
    const encoded = texts.map((x) => this.tokenizer.encode(x, this.opts.maxLength).ids);
    if (timing) timing.tokenize += performance.now() - t;
    const order = encoded
      .map((_, i) => i)
      .sort((a, b) => (encoded[a] as number[]).length - (encoded[b] as number[]).length || a - b);
    const out: Float32Array[] = new Array<Float32Array>(texts.length);
    const lengths = order.map((i) => (encoded[i] as number[]).length);
    let start = 0;
    // a query's vector must not depend on the strangers micro-batched with it: a graph that
    // quantizes per run gets each query alone (one short query costs it little; builds keep their batches)
    const alone = queries && this.quantizesPerRun;
    let batch = 0;
    for (const end of planBatches(lengths, alone ? 1 : this.opts.batchSize, this.opts.maxPadding)) {
      if (cancelled?.()) throw new EmbedCancelled();
      const idx = order.slice(start, end);
      if (!stream?.skip?.has(batch)) {
        const vecs = await this.runBatch(
          idx.map((i) => encoded[i] as number[]),
          timing,
        );
        idx.forEach((i, j) => (out[i] = vecs[j] as Float32Array));
        stream?.onVectors(batch, idx, vecs);
      }
      start = end;
      batch++;
      onBatch?.(end);
    }
    return out;
  }

  async close(): Promise<void> {
    await this.session.close();
  }

  private async runBatch(rows: number[][], timing?: CoreTiming): Promise<Float32Array[]> {
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
    let t = performance.now();
    const res = await this.session.run(ids, mask, batch, seqLen, this.output);
    if (timing) {
      const now = performance.now();
      timing.run += now - t;
      t = now;
    }
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
    const out = vecs.map(l2Normalize);
    if (timing) timing.pool += performance.now() - t;
    return out;
  }
}

import { RetrieverError } from '../errors.js';
import type { EncodeTiming, TokenCounter } from '../core/contracts.js';
import { MAX_PADDING_RATIO } from './batch-plan.js';
import type { Pooling } from './embed-core.js';
import type { Encoder, EncoderSettings, PassageBatches } from './encoder.js';
import { encoderId } from './encoder.js';
import { buildEncoderHost, encoderHost, type EncoderHost, type EncoderHostKind } from './encoder-host.js';
import type { FromEncoder, ToEncoder } from './encoder-serve.js';
import type { ModelFiles } from './model-files.js';
import type { Device } from './onnx-session.js';
import { WordPieceTokenizer } from './wordpiece.js';

export interface OnnxEncoderOptions {
  model: string;
  files: ModelFiles;
  modelSha256: string;
  tokenizerSha256: string;
  device: Device;
  /** ONNX Runtime intra-op threads; 0 = one per core. */
  threads: number;
  batchSize: number;
  /** Padding a batch may carry, as padded ÷ real tokens (default MAX_PADDING_RATIO). */
  maxPadding?: number;
  /** Fuse attention when the graph allows it (fast-session.ts); default true. */
  fuseAttention?: boolean;
  maxLength: number;
  pooling: Pooling;
  queryPrefix: string;
  passagePrefix: string;
  /**
   * Where the session runs: the process's encoder thread (queries; the
   * default), or a process of its own that a stop kills at once, mid-batch
   * (a build: encoder-child.ts says why).
   */
  host?: EncoderHostKind;
}

interface Pending {
  resolve: (v: Float32Array[]) => void;
  reject: (e: Error) => void;
  /** The reason to reject with when the thread confirms a cancellation. */
  signal?: AbortSignal;
  /** Texts done so far, after each batch. */
  onProgress?: (done: number) => void;
  /** Each batch's vectors as it is done (a streamed build window). */
  onBatch?: PassageBatches['onBatch'];
  /** When the request was posted, ms (performance.now), for its round trip. */
  postedAt: number;
}

/** An e5-style ONNX encoder whose session runs on the encoder thread or in an encoder process. */
export class OnnxEncoder implements Encoder {
  readonly id: string;
  readonly dim: number;
  readonly settings: EncoderSettings;
  readonly tokenCounter: TokenCounter;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private dead: Error | undefined;
  private closed: (() => void) | undefined;
  /** Hears where each call's time went (a server's stage metrics). */
  onTiming: ((t: EncodeTiming) => void) | undefined;

  private constructor(
    private readonly host: EncoderHost,
    private readonly session: number,
    dim: number,
    opts: OnnxEncoderOptions,
    /** The graph the session runs: fused attention or the file as published, and why. */
    readonly graph: string,
  ) {
    this.dim = dim;
    this.settings = {
      model: opts.model,
      variant: opts.files.variant,
      modelSha256: opts.modelSha256,
      tokenizerSha256: opts.tokenizerSha256,
      dim,
      queryPrefix: opts.queryPrefix,
      passagePrefix: opts.passagePrefix,
      pooling: opts.pooling,
      normalize: true,
      maxLength: opts.maxLength,
    };
    this.id = encoderId(this.settings);
    const tokenizer = WordPieceTokenizer.fromFile(opts.files.tokenizer, opts.files.vocabSize);
    this.tokenCounter = {
      id: `wordpiece:${opts.model}`,
      words: (text) => tokenizer.wordSpans(text),
      count: (text) => tokenizer.countTokens(text),
    };
  }

  static async open(opts: OnnxEncoderOptions): Promise<OnnxEncoder> {
    let encoder: OnnxEncoder | undefined;
    let settle: ((dim: number) => void) | undefined;
    let fail: ((e: Error) => void) | undefined;
    let graph = '';
    const ready = new Promise<number>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    const host = opts.host === 'process' ? buildEncoderHost : encoderHost;
    const session = host.newSession((msg) => {
      if (msg.type === 'ready') {
        graph = msg.graph;
        settle?.(msg.dim);
      } else if (msg.type === 'open-error') {
        const err = new RetrieverError('MODEL', msg.message);
        fail?.(err);
        encoder?.die(err);
      } else encoder?.onMessage(msg);
    });
    const init: ToEncoder = {
      type: 'open',
      session,
      files: opts.files,
      options: {
        device: opts.device,
        threads: opts.threads,
        maxLength: opts.maxLength,
        batchSize: opts.batchSize,
        maxPadding: opts.maxPadding ?? MAX_PADDING_RATIO,
        fuseAttention: opts.fuseAttention ?? true,
        pooling: opts.pooling,
      },
    };
    try {
      host.post(init);
      const dim = await ready;
      encoder = new OnnxEncoder(host, session, dim, opts, graph);
      return encoder;
    } catch (err) {
      host.endSession(session);
      throw err;
    }
  }

  embedQueries(texts: string[]): Promise<Float32Array[]> {
    return this.embedRaw(
      texts.map((t) => this.settings.queryPrefix + t),
      undefined,
      undefined,
      true,
    );
  }

  embedPassages(
    texts: string[],
    signal?: AbortSignal,
    onProgress?: (done: number) => void,
    batches?: PassageBatches,
  ): Promise<Float32Array[]> {
    return this.embedRaw(
      texts.map((t) => this.settings.passagePrefix + t),
      signal,
      onProgress,
      false,
      batches,
    );
  }

  /**
   * Texts already carrying their prefix. An aborted `signal` stops the work:
   * a thread before its next batch (the promise rejects with the signal's
   * reason once it has stopped, so nothing runs on after the caller gave up),
   * a process at once, killed mid-batch (the encoder is then closed).
   * `onProgress` hears the texts done after each batch.
   */
  embedRaw(
    texts: string[],
    signal?: AbortSignal,
    onProgress?: (done: number) => void,
    queries = false,
    batches?: PassageBatches,
  ): Promise<Float32Array[]> {
    if (this.dead) return Promise.reject(this.dead);
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (texts.length === 0) return Promise.resolve([]);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const msg: ToEncoder = {
        type: 'embed',
        session: this.session,
        id,
        texts,
        progress: onProgress !== undefined,
        queries,
        ...(batches ? { stream: { skip: [...(batches.skip ?? [])] } } : {}),
      };
      // the listener lives as long as the request: a build passes one signal to thousands of windows
      let detach = (): void => {};
      if (signal) {
        const onAbort = this.stopOnAbort(msg, signal);
        signal.addEventListener('abort', onAbort, { once: true });
        detach = () => signal.removeEventListener('abort', onAbort);
      }
      this.pending.set(id, {
        resolve: (v) => {
          detach();
          resolve(v);
        },
        reject: (e) => {
          detach();
          reject(e);
        },
        ...(signal ? { signal } : {}),
        ...(onProgress ? { onProgress } : {}),
        ...(batches ? { onBatch: batches.onBatch } : {}),
        postedAt: performance.now(),
      });
      this.host.post(msg);
    });
  }

  /** What an abort does to request `msg`: a thread is asked to stop between batches, a process is killed. */
  private stopOnAbort(msg: Extract<ToEncoder, { type: 'embed' }>, signal: AbortSignal): () => void {
    if (this.host.kind === 'process') {
      return () => {
        const why = signal.reason as Error;
        this.die(why);
        this.host.abandon(why);
      };
    }
    const cancel = new Int32Array(new SharedArrayBuffer(4));
    msg.cancel = cancel;
    return () => void Atomics.store(cancel, 0, 1);
  }

  async close(): Promise<void> {
    if (this.dead) return;
    this.dead = new RetrieverError('MODEL', 'the encoder is closed');
    await new Promise<void>((resolve) => {
      this.closed = resolve;
      this.host.post({ type: 'close', session: this.session });
    });
    this.host.endSession(this.session);
  }

  private onMessage(msg: FromEncoder): void {
    if (msg.type === 'closed') this.closed?.();
    if (msg.type === 'progress') return this.pending.get(msg.id)?.onProgress?.(msg.done);
    if (msg.type === 'batch') {
      const vectors: Float32Array[] = [];
      for (let i = 0; i < msg.rows.length; i++) vectors.push(msg.data.subarray(i * msg.dim, (i + 1) * msg.dim));
      return this.pending.get(msg.id)?.onBatch?.(msg.batch, msg.rows, vectors);
    }
    if (msg.type !== 'done' && msg.type !== 'error') return;
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if (msg.type === 'error') {
      p.reject(
        msg.cancelled && p.signal ? (p.signal.reason as Error) : new RetrieverError('MODEL', `encoder: ${msg.message}`),
      );
      return;
    }
    if (this.onTiming) {
      const t = msg.timing;
      const total = performance.now() - p.postedAt;
      this.onTiming({
        tokenize: t.tokenize / 1000,
        run: t.run / 1000,
        pool: t.pool / 1000,
        hop: Math.max(0, total - t.tokenize - t.run - t.pool) / 1000,
      });
    }
    const n = msg.data.length / msg.dim;
    const out: Float32Array[] = [];
    for (let i = 0; i < n; i++) out.push(msg.data.subarray(i * msg.dim, (i + 1) * msg.dim));
    p.resolve(out);
  }

  die(err: Error): void {
    this.dead ??= err instanceof RetrieverError ? err : new RetrieverError('MODEL', `encoder: ${err.message}`);
    for (const p of this.pending.values()) p.reject(this.dead);
    this.pending.clear();
    this.closed?.();
  }
}

import { Worker } from 'node:worker_threads';
import { RetrieverError } from '../errors.js';
import type { TokenCounter } from '../ingest/chunker.js';
import type { Pooling } from './embed-core.js';
import type { Encoder, EncoderSettings } from './encoder.js';
import { encoderId } from './encoder.js';
import type { EncoderWorkerInit, FromEncoder, ToEncoder } from './encoder-worker.js';
import type { ModelFiles } from './model-files.js';
import type { Device } from './onnx-session.js';
import { WordPieceTokenizer } from './wordpiece.js';

export interface OnnxEncoderOptions {
  model: string;
  files: ModelFiles;
  modelSha256: string;
  device: Device;
  /** ONNX Runtime intra-op threads; 0 = one per core. */
  threads: number;
  batchSize: number;
  maxLength: number;
  pooling: Pooling;
  queryPrefix: string;
  passagePrefix: string;
}

interface Pending {
  resolve: (v: Float32Array[]) => void;
  reject: (e: Error) => void;
}

/** An e5-style ONNX encoder whose session runs on a dedicated worker thread. */
export class OnnxEncoder implements Encoder {
  readonly id: string;
  readonly dim: number;
  readonly settings: EncoderSettings;
  readonly tokenCounter: TokenCounter;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private dead: Error | undefined;

  private constructor(
    private readonly worker: Worker,
    dim: number,
    opts: OnnxEncoderOptions,
  ) {
    this.dim = dim;
    this.settings = {
      model: opts.model,
      variant: opts.files.variant,
      modelSha256: opts.modelSha256,
      dim,
      queryPrefix: opts.queryPrefix,
      passagePrefix: opts.passagePrefix,
      pooling: opts.pooling,
      normalize: true,
      maxLength: opts.maxLength,
    };
    this.id = encoderId(this.settings);
    const tokenizer = WordPieceTokenizer.fromFile(opts.files.tokenizer);
    this.tokenCounter = {
      id: `wordpiece:${opts.model}`,
      words: (text) => tokenizer.wordSpans(text),
      count: (text) => tokenizer.countTokens(text),
    };
    // the thread never keeps the process alive by itself; close() ends it cleanly
    worker.unref();
    worker.on('message', (msg: FromEncoder) => this.onMessage(msg));
    worker.on('error', (err) => this.die(err));
    worker.on('exit', (code) => this.die(new RetrieverError('MODEL', `the encoder thread exited (code ${code})`)));
  }

  static async open(opts: OnnxEncoderOptions): Promise<OnnxEncoder> {
    const init: EncoderWorkerInit = {
      files: opts.files,
      options: {
        device: opts.device,
        threads: opts.threads,
        maxLength: opts.maxLength,
        batchSize: opts.batchSize,
        pooling: opts.pooling,
      },
    };
    const worker = new Worker(workerUrl(), { workerData: init });
    const dim = await new Promise<number>((resolve, reject) => {
      const onMsg = (msg: FromEncoder): void => {
        worker.off('message', onMsg);
        if (msg.type === 'ready') resolve(msg.dim);
        else if (msg.type === 'init-error') reject(new RetrieverError('MODEL', msg.message));
        else reject(new RetrieverError('MODEL', `unexpected message from the encoder thread: ${msg.type}`));
      };
      worker.on('message', onMsg);
      worker.once('error', (err) =>
        reject(new RetrieverError('MODEL', `the encoder thread failed to start: ${err.message}`)),
      );
    }).catch(async (err: unknown) => {
      await worker.terminate();
      throw err;
    });
    return new OnnxEncoder(worker, dim, opts);
  }

  embedQueries(texts: string[]): Promise<Float32Array[]> {
    return this.embedRaw(texts.map((t) => this.settings.queryPrefix + t));
  }

  embedPassages(texts: string[]): Promise<Float32Array[]> {
    return this.embedRaw(texts.map((t) => this.settings.passagePrefix + t));
  }

  /** Texts already carrying their prefix. */
  embedRaw(texts: string[]): Promise<Float32Array[]> {
    if (this.dead) return Promise.reject(this.dead);
    if (texts.length === 0) return Promise.resolve([]);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const msg: ToEncoder = { type: 'embed', id, texts };
      this.worker.postMessage(msg);
    });
  }

  async close(): Promise<void> {
    if (this.dead) return;
    this.dead = new RetrieverError('MODEL', 'the encoder is closed');
    const msg: ToEncoder = { type: 'close' };
    this.worker.postMessage(msg);
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => void this.worker.terminate().then(() => resolve()), 2000);
      this.worker.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  private onMessage(msg: FromEncoder): void {
    if (msg.type !== 'done' && msg.type !== 'error') return;
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if (msg.type === 'error') {
      p.reject(new RetrieverError('MODEL', `encoder: ${msg.message}`));
      return;
    }
    const n = msg.data.length / msg.dim;
    const out: Float32Array[] = [];
    for (let i = 0; i < n; i++) out.push(msg.data.subarray(i * msg.dim, (i + 1) * msg.dim));
    p.resolve(out);
  }

  private die(err: Error): void {
    this.dead ??= err instanceof RetrieverError ? err : new RetrieverError('MODEL', `encoder thread: ${err.message}`);
    for (const p of this.pending.values()) p.reject(this.dead);
    this.pending.clear();
  }
}

function workerUrl(): URL {
  const here = import.meta.url;
  if (here.endsWith('.ts'))
    return new URL(here.replace('/src/', '/dist/src/').replace(/onnx-encoder\.ts$/, 'encoder-worker.js'));
  return new URL('./encoder-worker.js', here);
}

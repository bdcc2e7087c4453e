import type { EncodeTiming, TokenCounter, QueryEncoder } from '../core/contracts.js';

/**
 * Our encoder interface. Search and index code only see this, so another
 * backend (say, an encoder shipped as an npm package) plugs in without
 * touching them.
 */
export interface Encoder extends QueryEncoder {
  readonly id: string;
  readonly dim: number;
  readonly settings: EncoderSettings;
  embedQueries(texts: string[]): Promise<Float32Array[]>;
  /**
   * An aborted `signal` stops the work (between batches, or at once where the
   * encoder can be abandoned) and rejects with its reason; `onProgress` hears
   * the texts done after each batch.
   */
  embedPassages(
    texts: string[],
    signal?: AbortSignal,
    onProgress?: (done: number) => void,
    batches?: PassageBatches,
  ): Promise<Float32Array[]>;
  /** Counts chunk tokens exactly as the encoder will see them. */
  readonly tokenCounter: TokenCounter;
  /** Hears where each call's time went, when set (a server's stage metrics). */
  onTiming?: ((t: EncodeTiming) => void) | undefined;
  close(): Promise<void>;
}

/** Everything that changes a vector; recorded in the manifest and compared at startup. */
export interface EncoderSettings {
  model: string;
  variant: string;
  modelSha256: string;
  /** sha256 of tokenizer.json. */
  tokenizerSha256: string;
  dim: number;
  queryPrefix: string;
  passagePrefix: string;
  pooling: 'mean' | 'cls';
  normalize: true;
  maxLength: number;
}

export function encoderId(s: Pick<EncoderSettings, 'model' | 'variant'>): string {
  return `${s.model} (${s.variant})`;
}

/**
 * A build's passages embedded batch by batch (EmbedCore's BatchStream, across the thread or
 * process the model runs in): each batch heard as it is done, by its number in the plan, and the
 * batches in `skip` not run. The call then resolves with no vectors: they all came through onBatch.
 */
export interface PassageBatches {
  skip?: ReadonlySet<number>;
  onBatch(batch: number, rows: Uint32Array, vectors: Float32Array[]): void;
}

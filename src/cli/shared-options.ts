import { readEnv } from '../config.js';
import { RetrieverError } from '../errors.js';
import type { HubConfig } from '../hub/download.js';
import type { Logger } from '../util/log.js';
import { MAX_PADDING_RATIO } from '../encoder/batch-plan.js';

/** Options both CLIs share: where models come from and how the encoder runs. */
export const ENCODER_RUNTIME_OPTIONS = {
  device: {
    choices: ['cpu', 'cuda'] as const,
    default: 'cpu' as const,
    describe: 'where the encoder runs (cuda needs the CUDA provider, see README)',
  },
  'batch-size': { type: 'number', default: 32, describe: 'texts per encoder batch' },
  'batch-padding': {
    type: 'number',
    default: MAX_PADDING_RATIO,
    describe:
      'most padding an encoder batch may carry, as padded ÷ real tokens: texts are cut into batches of similar length (0 = pad each batch to its longest text, which can serve fast encoders better under load)',
  },
  'encoder-threads': { type: 'number', default: 0, describe: 'ONNX Runtime threads (0 = one per core)' },
  'fuse-attention': {
    type: 'boolean',
    default: true,
    describe:
      "fuse each layer's attention into one ONNX Runtime kernel when the model is a Hugging Face BERT export (checked against the file at start-up; --no-fuse-attention runs the file as published)",
  },
  'cache-dir': {
    type: 'string',
    describe: 'model/dataset download cache (default: $HF_HUB_CACHE or $HF_HOME/hub or ~/.cache/huggingface/hub)',
  },
  offline: {
    type: 'boolean',
    default: false,
    describe: 'never download (also HF_HUB_OFFLINE=1); fail with the list of missing files',
  },
} as const;

export function hubConfig(args: { 'cache-dir'?: string; offline: boolean }, log: Logger, progress: boolean): HubConfig {
  const env = readEnv();
  if (!/^https?:\/\/[^/]/.test(env.hfEndpoint)) {
    // shown without any user:password@ it may start with
    const host = env.hfEndpoint
      .replace(/^\/+/, '')
      .replace(/^[^@/]*@/, '')
      .slice(0, 100);
    throw new RetrieverError(
      'BAD_INPUT',
      `HF_ENDPOINT is "${host}", which has no scheme: set it to a URL such as https://${host || 'hf-mirror.com'}`,
    );
  }
  const cfg: HubConfig = {
    endpoint: env.hfEndpoint,
    cacheDir: args['cache-dir'] ?? env.cacheDir,
    offline: args.offline || env.hfHubOffline,
    log,
    progress,
  };
  if (env.hfToken) cfg.token = env.hfToken;
  return cfg;
}

/** `--batch-padding` as the encoder takes it: 0 means no limit; otherwise at least 1. */
export function batchPadding(v: number): number {
  if (v === 0) return Infinity;
  if (!Number.isFinite(v) || v < 1) {
    throw new RetrieverError('BAD_INPUT', `--batch-padding must be 0 (no limit) or a ratio of at least 1, got ${v}`);
  }
  return v;
}

export function checkInt(flag: string, v: number, min: number, max: number): void {
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new RetrieverError('BAD_INPUT', `${flag} must be an integer from ${min} to ${max}, got ${v}`);
  }
}

/** An empty --index-dir would put indexes in the working directory's root of names: refuse it. */
export function checkIndexDir(v: unknown): void {
  if (typeof v !== 'string' || v.trim() === '') {
    throw new RetrieverError(
      'BAD_INPUT',
      '--index-dir is empty: give the directory that holds the indexes (default: indexes)',
    );
  }
}

/** `--backend URL[,URL...]`: the engine's node URLs, each checked for a scheme. */
export function backendNodes(raw: string): string[] {
  const nodes = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (nodes.length === 0 || nodes.some((n) => !/^https?:\/\/[^/]/.test(n))) {
    throw new RetrieverError(
      'BAD_INPUT',
      `--backend must be node URLs such as http://127.0.0.1:9200 (comma-separated for several), got "${raw.slice(0, 200)}"`,
    );
  }
  return nodes;
}

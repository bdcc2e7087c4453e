import { readEnv } from '../config.js';
import { RetrieverError } from '../errors.js';
import type { HubConfig } from '../hub/download.js';
import type { Logger } from '../util/log.js';

/** Options both CLIs share: where models come from and how the encoder runs. */
export const ENCODER_RUNTIME_OPTIONS = {
  device: {
    choices: ['cpu', 'cuda'] as const,
    default: 'cpu' as const,
    describe: 'where the encoder runs (cuda needs the CUDA provider, see README)',
  },
  'batch-size': { type: 'number', default: 32, describe: 'texts per encoder batch' },
  'encoder-threads': { type: 'number', default: 0, describe: 'ONNX Runtime threads (0 = one per core)' },
  'cache-dir': {
    type: 'string',
    describe: 'model/dataset download cache (default: $HF_HUB_CACHE or $HF_HOME/hub or ~/.cache/huggingface/hub)',
  },
  offline: { type: 'boolean', default: false, describe: 'never download; fail with the list of missing files' },
} as const;

export function hubConfig(args: { 'cache-dir'?: string; offline: boolean }, log: Logger, progress: boolean): HubConfig {
  const env = readEnv();
  const cfg: HubConfig = {
    endpoint: env.hfEndpoint,
    cacheDir: args['cache-dir'] ?? env.cacheDir,
    offline: args.offline,
    log,
    progress,
  };
  if (env.hfToken) cfg.token = env.hfToken;
  return cfg;
}

export function checkInt(flag: string, v: number, min: number, max: number): void {
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new RetrieverError('BAD_INPUT', `${flag} must be an integer from ${min} to ${max}, got ${v}`);
  }
}

import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Encoder } from '../../src/encoder/encoder.js';
import { openEncoder, type EncoderChoice } from '../../src/encoder/load-encoder.js';
import { silentLogger } from '../../src/util/log.js';
import { sharedPath } from './paths.js';

export const TINY_MODEL = sharedPath('models/tiny-e5');

/** `build-index` arguments that index `input` with the tiny e5, as a user would run it. */
export function tinyBuildArgs(name: string, input: string, indexDir: string, format = 'wiki18'): string[] {
  return ['--name', name, '--input', input, '--format', format, '--index-dir', indexDir, '--model-path', TINY_MODEL];
}

export function tinyChoice(over: Partial<EncoderChoice> = {}): EncoderChoice {
  return {
    model: 'tiny-e5',
    modelPath: TINY_MODEL,
    variant: 'fp32',
    revision: 'main',
    device: 'cpu',
    threads: 1,
    batchSize: 16,
    maxLength: 512,
    pooling: 'mean',
    queryPrefix: 'query: ',
    passagePrefix: 'passage: ',
    ...over,
  };
}

export async function openTinyEncoder(over: Partial<EncoderChoice> = {}): Promise<Encoder> {
  const hub = {
    endpoint: 'http://127.0.0.1:9',
    cacheDir: '/nonexistent',
    offline: true,
    log: silentLogger,
    progress: false,
  };
  return (await openEncoder(tinyChoice(over), hub)).encoder;
}

/**
 * A copy of the tiny model whose ONNX file has one extra (unknown, ignored)
 * protobuf field appended: it loads and computes the same numbers, but its
 * sha256 differs, as a retrained or re-exported model's would.
 */
export function makeAlteredTinyModel(dir: string): string {
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  for (const f of ['tokenizer.json', 'config.json']) copyFileSync(join(TINY_MODEL, f), join(dir, f));
  const onnx = readFileSync(join(TINY_MODEL, 'onnx', 'model.onnx'));
  writeFileSync(join(dir, 'onnx', 'model.onnx'), Buffer.concat([onnx, Buffer.from([0xc2, 0x3e, 0x01, 0x00])]));
  return dir;
}

/** Our own Encoder interface, failing after `okCalls` passage batches (an interrupted build). */
export function failingAfter(encoder: Encoder, okCalls: number): Encoder {
  let calls = 0;
  return {
    id: encoder.id,
    dim: encoder.dim,
    settings: encoder.settings,
    tokenCounter: encoder.tokenCounter,
    embedQueries: (t) => encoder.embedQueries(t),
    embedPassages: (t, signal, onProgress, batches) =>
      ++calls > okCalls
        ? Promise.reject(new Error('simulated crash'))
        : encoder.embedPassages(t, signal, onProgress, batches),
    close: async () => {},
  };
}

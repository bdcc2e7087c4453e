import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RetrieverError } from '../errors.js';

/**
 * A Hugging Face ONNX export on disk (the Xenova/optimum layout):
 *   onnx/model.onnx (or a variant), tokenizer.json, config.json.
 */
export interface ModelFiles {
  dir: string;
  /** The ONNX file relative to `dir`, e.g. "onnx/model.onnx". */
  variant: string;
  onnx: string;
  tokenizer: string;
  config: string;
  hiddenSize: number;
  maxPositions: number;
}

/** Named precisions → the file names Hugging Face ONNX exports use. */
export const MODEL_VARIANTS: Record<string, string> = {
  fp32: 'onnx/model.onnx',
  fp16: 'onnx/model_fp16.onnx',
  int8: 'onnx/model_quantized.onnx',
  quantized: 'onnx/model_quantized.onnx',
  uint8: 'onnx/model_uint8.onnx',
  q4: 'onnx/model_q4.onnx',
};

/** "fp16" → "onnx/model_fp16.onnx"; a path ending in .onnx is taken as given. */
export function variantFile(variant: string): string {
  if (variant.endsWith('.onnx')) return variant;
  const f = MODEL_VARIANTS[variant];
  if (!f) {
    throw new RetrieverError(
      'BAD_INPUT',
      `unknown model variant "${variant}": use one of ${Object.keys(MODEL_VARIANTS).join(', ')} or a path to an .onnx file inside the model directory`,
    );
  }
  return f;
}

export function resolveModelDir(dir: string, variant: string): ModelFiles {
  const rel = variantFile(variant);
  const need = { onnx: join(dir, rel), tokenizer: join(dir, 'tokenizer.json'), config: join(dir, 'config.json') };
  const missing = Object.values(need).filter((p) => !existsSync(p));
  if (missing.length > 0) {
    throw new RetrieverError(
      'MODEL',
      `model directory ${dir} is missing ${missing.join(', ')}: expected a Hugging Face ONNX export (onnx/model*.onnx, tokenizer.json, config.json)`,
    );
  }
  let config: { hidden_size?: number; max_position_embeddings?: number };
  try {
    config = JSON.parse(readFileSync(need.config, 'utf8')) as typeof config;
  } catch (err) {
    throw new RetrieverError('MODEL', `cannot read ${need.config}: ${(err as Error).message}`, { cause: err });
  }
  if (!Number.isInteger(config.hidden_size)) {
    throw new RetrieverError('MODEL', `${need.config} has no integer hidden_size`);
  }
  return {
    dir,
    variant: rel,
    ...need,
    hiddenSize: config.hidden_size as number,
    maxPositions: config.max_position_embeddings ?? 512,
  };
}

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RetrieverError } from '../errors.js';
import { checkModelFile, MAX_CONFIG_BYTES, MAX_TOKENIZER_BYTES, readModelJson } from './read-model-file.js';
import { own } from '../util/own.js';

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
  /** `vocab_size` from config.json, when it says: the rows of the embedding table every token id indexes. */
  vocabSize?: number;
  /** `num_attention_heads` from config.json, when it says (fusing attention needs it). */
  numHeads?: number;
  /** What the model's own sentence-transformers files say; absent when it has none. */
  sentenceTransformers?: SentenceTransformersConfig;
}

/**
 * The facts a sentence-transformers model directory states about how its
 * vectors are made: `modules.json` (is there a Normalize module),
 * `1_Pooling/config.json` (the pooling mode), `sentence_bert_config.json`
 * (the window) and `config_sentence_transformers.json` (prompts, similarity).
 */
export interface SentenceTransformersConfig {
  pooling?: 'mean' | 'cls';
  normalize: boolean;
  maxSeqLength?: number;
  queryPrompt?: string;
  passagePrompt?: string;
  similarity?: string;
}

/** The sentence-transformers files `readSentenceTransformers` looks at, relative to the model directory. */
export const SENTENCE_TRANSFORMERS_FILES = [
  'modules.json',
  '1_Pooling/config.json',
  'sentence_bert_config.json',
  'config_sentence_transformers.json',
] as const;

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
  const f = own(MODEL_VARIANTS, variant);
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
  checkModelFile(need.onnx);
  checkModelFile(need.tokenizer, MAX_TOKENIZER_BYTES);
  const config: {
    hidden_size?: unknown;
    max_position_embeddings?: unknown;
    num_attention_heads?: unknown;
    vocab_size?: unknown;
  } = readJson(need.config) ?? {};
  const hiddenSize = positiveInt(config.hidden_size, need.config, 'hidden_size', 65_536);
  const maxPositions =
    config.max_position_embeddings === undefined
      ? 512
      : positiveInt(config.max_position_embeddings, need.config, 'max_position_embeddings', 1 << 20);
  return {
    dir,
    variant: rel,
    ...need,
    hiddenSize,
    maxPositions,
    ...(config.num_attention_heads === undefined
      ? {}
      : { numHeads: positiveInt(config.num_attention_heads, need.config, 'num_attention_heads', 4096) }),
    ...(config.vocab_size === undefined
      ? {}
      : { vocabSize: positiveInt(config.vocab_size, need.config, 'vocab_size', 1 << 24) }),
    ...(existsSync(join(dir, 'modules.json')) ? { sentenceTransformers: readSentenceTransformers(dir) } : {}),
  };
}

/** A model setting that must be a positive integer (a 0 or negative window made every query return the same passage). */
function positiveInt(v: unknown, path: string, key: string, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max) {
    throw new RetrieverError(
      'MODEL',
      `${path}: "${key}" must be an integer from 1 to ${max}, got ${JSON.stringify(v)?.slice(0, 40)}: the model directory is damaged or not a BERT export`,
    );
  }
  return v;
}

/** A model settings file that must hold a JSON object (undefined when the file is absent). */
function readJson(path: string): Record<string, unknown> | undefined {
  if (!existsSync(path)) return undefined;
  const v = readModelJson(path, MAX_CONFIG_BYTES);
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  throw new RetrieverError('MODEL', `${path} is not a JSON object`);
}

/** Reads a sentence-transformers model's pooling, normalisation, window and prompts. */
export function readSentenceTransformers(dir: string): SentenceTransformersConfig {
  const modulesPath = join(dir, 'modules.json');
  const modules = readModelJson(modulesPath, MAX_CONFIG_BYTES);
  if (!Array.isArray(modules)) throw new RetrieverError('MODEL', `${modulesPath} is not a JSON list of modules`);
  const types = modules.map((m) => String((m as { type?: unknown }).type ?? ''));
  const poolingModule = modules.find((m) => String((m as { type?: unknown }).type).endsWith('.Pooling')) as
    { path?: string } | undefined;
  const out: SentenceTransformersConfig = { normalize: types.some((t) => t.endsWith('.Normalize')) };
  if (poolingModule) {
    const path = join(dir, poolingModule.path ?? '1_Pooling', 'config.json');
    const p = readJson(path) ?? {};
    if (p['pooling_mode_cls_token'] === true) out.pooling = 'cls';
    else if (p['pooling_mode_mean_tokens'] === true) out.pooling = 'mean';
    else {
      const mode = Object.keys(p).find((k) => k.startsWith('pooling_mode_') && p[k] === true) ?? 'none';
      throw new RetrieverError(
        'MODEL',
        `${path} asks for ${mode.replace('pooling_mode_', '')} pooling, which is not supported: only mean and cls are; pass --pooling mean or --pooling cls to override`,
      );
    }
  }
  const bertPath = join(dir, 'sentence_bert_config.json');
  const bert = readJson(bertPath);
  if (bert?.['max_seq_length'] !== undefined)
    out.maxSeqLength = positiveInt(bert['max_seq_length'], bertPath, 'max_seq_length', 1 << 20);
  const st = readJson(join(dir, 'config_sentence_transformers.json'));
  const prompts = (st?.['prompts'] ?? {}) as Record<string, unknown>;
  const prompt = (...keys: string[]): string | undefined => {
    for (const k of keys) if (typeof prompts[k] === 'string') return prompts[k];
    return undefined;
  };
  const query = prompt('query', 'search_query');
  const passage = prompt('passage', 'document', 'corpus', 'search_document');
  if (query !== undefined) out.queryPrompt = query;
  if (passage !== undefined) out.passagePrompt = passage;
  if (typeof st?.['similarity_fn_name'] === 'string') out.similarity = st['similarity_fn_name'];
  return out;
}

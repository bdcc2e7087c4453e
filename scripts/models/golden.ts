/**
 * Golden vectors of the real models: an independent pipeline's vectors
 * (Hugging Face `tokenizers` + onnxruntime + numpy pooling in Python,
 * scripts/models/reference_embed.py, on the very ONNX file the product
 * loads) for 256 texts of ../shared, committed in
 * test/fixtures/golden/MODEL.json so that the network tier checks the
 * product's vectors against them without Python (make-golden.ts writes
 * them; the 1,200-text comparison with Python beside it is the `numerics`
 * bench suite, run before a release). The texts are named by their place in
 * ../shared, never copied: 128 2WikiMultiHopQA paragraphs, 64 of its
 * questions, and 64 texts of eight paragraphs each, over 512 tokens, so
 * truncation is held to the reference too.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { floatsToHalves, halvesToFloats } from '../../src/util/half.js';

export const GOLDEN_TEXTS = { paragraphs: 128, questions: 64, long: 64 } as const;

/** The golden texts, from ../shared's 2wiki-200, in a fixed order: paragraphs, questions, long texts. */
export function goldenTexts(shared: string): string[] {
  const lines = (file: string): Array<Record<string, string>> =>
    readFileSync(join(shared, 'data/2wiki-200', file), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Record<string, string>);
  const paragraphs = lines('corpus.jsonl').map((r) => r['contents'] as string);
  const questions = lines('queries.jsonl').map((r) => r['question'] as string);
  const long = Array.from({ length: GOLDEN_TEXTS.long }, (_, i) => paragraphs.slice(i * 7, i * 7 + 8).join('\n'));
  return [...paragraphs.slice(0, GOLDEN_TEXTS.paragraphs), ...questions.slice(0, GOLDEN_TEXTS.questions), ...long];
}

export interface Golden {
  about: string;
  model: string;
  onnx_sha256: string;
  tokenizer_sha256: string;
  dim: number;
  /** What each text was prefixed with before embedding (the model's passage prompt). */
  prefix: string;
  /** Texts a batch on the reference's side (int8 files quantize activations per batch: 1). */
  batch: number;
  texts: typeof GOLDEN_TEXTS;
  /** The reference's onnxruntime (pinned to the product's onnxruntime-node). */
  onnxruntime?: string;
  /** The vectors, row after row, as little-endian IEEE half floats in base64 (cosine error < 1e-6). */
  vectors_f16: string;
}

export function goldenPath(root: string, model: string): string {
  return join(root, 'test/fixtures/golden', `${model}.json`);
}

export function writeGolden(path: string, g: Omit<Golden, 'vectors_f16'>, vectors: Float32Array): void {
  const halves = floatsToHalves(vectors);
  const golden: Golden = { ...g, vectors_f16: Buffer.from(halves.buffer).toString('base64') };
  // two-space indent: what prettier writes, so `npm run check` passes on a fresh set
  writeFileSync(path, `${JSON.stringify(golden, null, 2)}\n`);
}

export function readGolden(path: string): { golden: Golden; vectors: Float32Array[] } {
  const golden = JSON.parse(readFileSync(path, 'utf8')) as Golden;
  const raw = Buffer.from(golden.vectors_f16, 'base64');
  const flat = halvesToFloats(new Uint16Array(raw.buffer, raw.byteOffset, raw.byteLength / 2));
  const n = flat.length / golden.dim;
  return { golden, vectors: Array.from({ length: n }, (_, i) => flat.subarray(i * golden.dim, (i + 1) * golden.dim)) };
}

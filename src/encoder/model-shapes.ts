/**
 * What is known of the published models' shapes, by name: a file that
 * contradicts its model's name is refused before it is used. A hub stand-in
 * once served a 32-dimensional random model as intfloat/e5-base-v2; it was
 * accepted, became the dense arm, and made hybrid worse than BM25 alone
 * with no warning (a mirror, a proxy cache or a half-finished download can
 * do the same). Pure: the callers read the files.
 */
import { own } from '../util/own.js';

export interface ModelShape {
  /** The family's name as messages give it. */
  family: string;
  hidden: number;
  vocab: number;
  layers: number;
}

/** Published BERT-family retrieval models, by their name without organisation or format suffix. */
const KNOWN: Record<string, Omit<ModelShape, 'family'>> = {
  'e5-small': { hidden: 384, vocab: 30522, layers: 12 },
  'e5-small-v2': { hidden: 384, vocab: 30522, layers: 12 },
  'e5-base': { hidden: 768, vocab: 30522, layers: 12 },
  'e5-base-v2': { hidden: 768, vocab: 30522, layers: 12 },
  'e5-large': { hidden: 1024, vocab: 30522, layers: 24 },
  'e5-large-v2': { hidden: 1024, vocab: 30522, layers: 24 },
  'bge-small-en': { hidden: 384, vocab: 30522, layers: 12 },
  'bge-small-en-v1.5': { hidden: 384, vocab: 30522, layers: 12 },
  'bge-base-en': { hidden: 768, vocab: 30522, layers: 12 },
  'bge-base-en-v1.5': { hidden: 768, vocab: 30522, layers: 12 },
  'bge-large-en': { hidden: 1024, vocab: 30522, layers: 24 },
  'bge-large-en-v1.5': { hidden: 1024, vocab: 30522, layers: 24 },
  'all-minilm-l6-v2': { hidden: 384, vocab: 30522, layers: 6 },
  'all-minilm-l12-v2': { hidden: 384, vocab: 30522, layers: 12 },
  'paraphrase-minilm-l6-v2': { hidden: 384, vocab: 30522, layers: 6 },
  'multi-qa-minilm-l6-cos-v1': { hidden: 384, vocab: 30522, layers: 6 },
};

/** Suffixes a directory or repository adds to a model's name: its format, not another model. */
const FORMAT_SUFFIX = /[-_.](onnx|int8|uint8|fp16|fp32|q4|quantized|optimum)$/;

/** The known shape of a model by any of its names (hub id, ONNX repository, directory name), if known. */
export function knownShape(names: readonly string[]): ModelShape | undefined {
  for (const name of names) {
    let n = name.toLowerCase().split('/').pop() ?? '';
    while (FORMAT_SUFFIX.test(n)) n = n.replace(FORMAT_SUFFIX, '');
    const shape = own(KNOWN, n);
    if (shape) return { family: n, ...shape };
  }
  return undefined;
}

/** What a model's files say of its shape; absent facts are not checked. */
export interface ShapeFacts {
  hidden?: number;
  vocab?: number;
  layers?: number;
}

/** The contradictions between `facts` (read from `file`) and the known shape, as words; empty when none. */
export function shapeMismatches(shape: ModelShape, facts: ShapeFacts): string[] {
  const out: string[] = [];
  const check = (what: string, got: number | undefined, want: number): void => {
    if (got !== undefined && got !== want) out.push(`${what} ${got} where ${shape.family} has ${want}`);
  };
  check('hidden size', facts.hidden, shape.hidden);
  check('vocabulary', facts.vocab, shape.vocab);
  check('layers', facts.layers, shape.layers);
  return out;
}

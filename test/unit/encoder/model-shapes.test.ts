import { describe, expect, it } from 'vitest';
import { knownShape, shapeMismatches } from '../../../src/encoder/model-shapes.js';

describe('known model shapes', () => {
  it('finds a model by hub id, ONNX repository or directory name, format suffixes and all', () => {
    for (const name of ['intfloat/e5-base-v2', 'Xenova/e5-base-v2', 'e5-base-v2-onnx', 'e5-base-v2_int8'])
      expect(knownShape([name])?.hidden, name).toBe(768);
    expect(knownShape(['sentence-transformers/all-MiniLM-L6-v2'])).toMatchObject({ hidden: 384, layers: 6 });
    expect(knownShape(['BAAI/bge-small-en-v1.5-int8'])).toMatchObject({ hidden: 384, vocab: 30522 });
    // a name of no known model, and names that only contain one
    for (const name of ['tiny-e5', 'my-e5-base-v2-finetune', 'e5-base-v3'])
      expect(knownShape([name]), name).toBeUndefined();
  });

  it('names each fact that contradicts the shape, and nothing for facts the files do not give', () => {
    const e5 = knownShape(['intfloat/e5-base-v2'])!;
    expect(shapeMismatches(e5, { hidden: 32, vocab: 30522 })).toEqual(['hidden size 32 where e5-base-v2 has 768']);
    expect(shapeMismatches(e5, { vocab: 250002, layers: 24 })).toEqual([
      'vocabulary 250002 where e5-base-v2 has 30522',
      'layers 24 where e5-base-v2 has 12',
    ]);
    expect(shapeMismatches(e5, {})).toEqual([]);
  });
});

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveModelDir } from '../../../src/encoder/model-files.js';
import { OnnxEncoder } from '../../../src/encoder/onnx-encoder.js';
import { WordPieceTokenizer } from '../../../src/encoder/wordpiece.js';
import { HAS_SHARED, sharedPath } from '../../helpers/paths.js';

interface Golden {
  max_length: number;
  cases: Array<{ text: string; input_ids: number[]; embedding: number[] }>;
}

describe.skipIf(!HAS_SHARED)('tiny-e5 golden ids and vectors (real ONNX session)', () => {
  const dir = sharedPath('models/tiny-e5');
  const golden = HAS_SHARED
    ? (JSON.parse(readFileSync(sharedPath('models/tiny-e5/golden.json'), 'utf8')) as Golden)
    : { max_length: 512, cases: [] };
  let encoder: OnnxEncoder;

  beforeAll(async () => {
    encoder = await OnnxEncoder.open({
      model: 'tiny-e5',
      files: resolveModelDir(dir, 'fp32'),
      modelSha256: 'test',
      tokenizerSha256: 'test',
      device: 'cpu',
      threads: 1,
      batchSize: 3,
      maxPadding: Infinity, // batches padded to their longest text, so padding is what the batch test checks
      maxLength: golden.max_length,
      pooling: 'mean',
      queryPrefix: 'query: ',
      passagePrefix: 'passage: ',
    });
  });
  afterAll(async () => encoder?.close());

  it('token ids equal the Hugging Face reference for every case, truncation included', () => {
    const tok = WordPieceTokenizer.fromFile(sharedPath('models/tiny-e5/tokenizer.json'));
    for (const c of golden.cases) {
      expect(tok.encode(c.text, golden.max_length).ids, c.text.slice(0, 60)).toEqual(c.input_ids);
    }
    const long = golden.cases.find((c) => c.input_ids.length === golden.max_length);
    expect(long?.input_ids.at(-1)).toBe(102); // [SEP] stays last after truncation
  });

  it('vectors are within 1e-4 of the PyTorch reference, one text at a time', async () => {
    for (const c of golden.cases) {
      const [v] = await encoder.embedRaw([c.text]);
      expectClose(v as Float32Array, c.embedding, c.text);
    }
  });

  it('vectors are within 1e-4 in batches padded to their longest text', async () => {
    const vs = await encoder.embedRaw(golden.cases.map((c) => c.text));
    golden.cases.forEach((c, i) => expectClose(vs[i] as Float32Array, c.embedding, c.text));
  });

  it('adds the e5 prefixes', async () => {
    const q = golden.cases.find((c) => c.text.startsWith('query: how much'));
    const [v] = await encoder.embedQueries(['how much protein should a female eat']);
    expectClose(v as Float32Array, q?.embedding ?? [], 'query prefix');
  });
});

function expectClose(v: Float32Array, ref: number[], label: string): void {
  expect(v.length, label).toBe(ref.length);
  let maxErr = 0;
  for (let i = 0; i < ref.length; i++) maxErr = Math.max(maxErr, Math.abs((v[i] as number) - (ref[i] as number)));
  expect(maxErr, label.slice(0, 60)).toBeLessThan(1e-4);
}

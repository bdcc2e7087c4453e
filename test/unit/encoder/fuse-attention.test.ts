import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fuseAttention } from '../../../src/encoder/fuse-attention.js';
import {
  concat,
  floatTensorField,
  FLOAT,
  nodeField,
  opsetField,
  readFields,
  readNode,
  readTensor,
  WireError,
} from '../../../src/encoder/onnx-proto.js';
import { HAS_SHARED, sharedPath } from '../../helpers/paths.js';

describe('the ONNX wire codec', () => {
  it('writes a node that reads back the same, attributes and domain included', () => {
    const node = {
      name: '/encoder/layer.3/attention/self/Attention',
      opType: 'Attention',
      domain: 'com.microsoft',
      inputs: ['x', 'w', 'b', 'mask'],
      outputs: ['ctx'],
    };
    const bytes = nodeField(node, [
      { name: 'num_heads', int: 12 },
      { name: 'mask_filter_value', float: -3.4028234663852886e38 },
    ]);
    const [f] = readFields(bytes);
    expect(f?.no).toBe(1);
    expect(readNode(bytes, f!)).toEqual(node);
    const attrs = readFields(bytes, f!.payloadStart, f!.payloadStart + f!.value).filter((g) => g.no === 5);
    expect(attrs).toHaveLength(2);
  });

  it('writes a float tensor whose dims and values read back exactly', () => {
    const values = Float32Array.from({ length: 12 }, (_, i) => i / 3 - 1.5);
    const bytes = floatTensorField('qkv', [3, 4], values);
    const [f] = readFields(bytes);
    const t = readTensor(bytes, f!);
    expect(t).toMatchObject({ name: 'qkv', dims: [3, 4], dataType: FLOAT });
    expect(Array.from(t.floats!)).toEqual(Array.from(values));
    // the copy is its own: the source buffer may be reused
    bytes.fill(0);
    expect(t.floats![1]).toBeCloseTo(1 / 3 - 1.5, 6);
  });

  it('refuses a field that runs past its message, and a truncated varint', () => {
    const whole = concat([opsetField('com.microsoft', 1)]);
    expect(() => readFields(whole.subarray(0, whole.byteLength - 1))).toThrow(WireError);
    expect(() => readFields(Uint8Array.from([0x08, 0x80]))).toThrow(WireError);
  });
});

describe('fuseAttention on graphs it must leave alone', () => {
  it('says why, rather than throwing, for bytes that are not a model', () => {
    const r = fuseAttention(Uint8Array.from([0x3a, 0xff, 0xff, 0xff, 0x7f, 0x01]), 12);
    expect(r).toEqual({ reason: expect.stringMatching(/not a readable ONNX model/) as unknown });
  });

  it('says why for a model with no graph', () => {
    expect(fuseAttention(opsetField('', 17), 12)).toEqual({ reason: 'the model has no graph' });
  });

  it.skipIf(!HAS_SHARED)('leaves the tiny e5 (not a Hugging Face export) as it is, naming why', () => {
    const r = fuseAttention(readFileSync(sharedPath('models/tiny-e5/onnx/model.onnx')), 2);
    expect('reason' in r && r.reason).toMatch(/no \/encoder\/layer\.N\/attention\/self\/ nodes/);
  });
});

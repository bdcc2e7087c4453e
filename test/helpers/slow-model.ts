import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TINY_MODEL } from './encoder.js';

/**
 * A real ONNX model that is slow on purpose, for tests of what a long encoder
 * batch does to a build (progress, stops): each token id, cast to a float,
 * through a sine of `hidden` frequencies (a fixed pseudo-random embedding of
 * the id) and then `layers` dense layers of `hidden` × `hidden` (one weight
 * matrix, shared, so the file stays small) with tanh between them, as
 * `last_hidden_state`. About 2 · layers · hidden² multiply-adds a token, in
 * ONNX Runtime like any model; its vectors mean nothing. The directory holds
 * the tiny e5's tokenizer and a config.json with this hidden size.
 */
export function writeSlowModel(dir: string, opts: { hidden: number; layers: number }): string {
  return writeModel(dir, opts.hidden, opts.layers, {});
}

/**
 * A stand-in with e5-base-v2's shape (768 dimensions, BERT's 30,522-token
 * vocabulary, 12 layers in its config.json) that costs next to nothing: the
 * sine embedding of each token alone, so a passage's vector is the mean of its
 * tokens' (a bag of words). For tests of the default model's path under its
 * real name (downloads, first runs), where the tiny e5 of ../shared, 32
 * dimensions, is rightly refused as e5-base-v2. Its vectors are never quality.
 */
export function writeE5BaseStandIn(dir: string): string {
  return writeModel(dir, 768, 0, { num_hidden_layers: 12, num_attention_heads: 12 });
}

/**
 * A model that quantizes its activations per run, as the published int8 files do: each token
 * id times a row of frequencies, then DynamicQuantizeLinear (one scale for the whole batch, so a
 * text with a larger id changes every other text's scale) and an int8 MatMulInteger. Its vectors depend on the texts run with it, which is what the test of a query's
 * vector alone and among strangers needs; their meaning is nil.
 */
export function writeDynamicInt8Model(dir: string, d = 64): string {
  return writeModel(dir, d, 0, {}, (input, output) => {
    const w = new Int8Array(d * d).map((_, i) => Math.round(Math.sin(i * 1.7) * 100));
    return {
      nodes: [
        node('DynamicQuantizeLinear', [input], ['xq', 'xs', 'xz']),
        node('MatMulInteger', ['xq', 'wq', 'xz', 'wz'], ['acc']),
        node('Cast', ['acc'], ['accf'], [intAttr('to', FLOAT)]),
        node('Mul', ['xs', 'ws'], ['scale']),
        node('Mul', ['accf', 'scale'], [output]),
      ],
      tensors: [
        rawTensor('wq', [d, d], INT8, new Uint8Array(w.buffer)),
        rawTensor('wz', [], INT8, new Uint8Array(1)),
        rawTensor('ws', [], FLOAT, new Uint8Array(new Float32Array([0.01]).buffer)),
      ],
    };
  });
}

/** Layers after the embedding, as nodes and initializers from `input` to `output`. */
type Tail = (input: string, output: string) => { nodes: Uint8Array[]; tensors: Uint8Array[] };

function writeModel(dir: string, d: number, layers: number, config: Record<string, number>, tail?: Tail): string {
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  for (const f of ['tokenizer.json', 'vocab.txt', 'special_tokens_map.json', 'tokenizer_config.json'])
    copyFileSync(join(TINY_MODEL, f), join(dir, f));
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({ model_type: 'bert', hidden_size: d, vocab_size: 30522, max_position_embeddings: 512, ...config }),
  );
  const nodes: Uint8Array[] = [
    node('Cast', ['input_ids'], ['ids_f'], [intAttr('to', FLOAT)]),
    node('Unsqueeze', ['ids_f'], ['x_in'], [intsAttr('axes', [2])]),
    node('MatMul', ['x_in', 'w_in'], ['phase']),
    ...(tail ? [] : [node('Sin', ['phase'], [layers === 0 ? 'last_hidden_state' : 'h0'])]),
  ];
  // a tail takes the token ids' phases themselves: their range, and so a per-run scale, follows the batch
  const extra = tail?.('phase', 'last_hidden_state');
  if (extra) nodes.push(...extra.nodes);
  for (let i = 0; i < layers; i++) {
    nodes.push(node('MatMul', [`h${i}`, 'w'], [`m${i}`]));
    nodes.push(node('Tanh', [`m${i}`], [i === layers - 1 ? 'last_hidden_state' : `h${i + 1}`]));
  }
  const w = new Float32Array(d * d).map((_, i) => Math.sin(i) / Math.sqrt(d));
  // frequencies that set tokens apart: id · f for f spread over (0, 1)
  const wIn = new Float32Array(d).map((_, i) => 0.001 + ((i * 0.618034) % 1));
  const graph = concat([
    ...nodes.map((n) => field(1, n)),
    field(2, str('slow')),
    field(5, tensor('w_in', [1, d], wIn)),
    ...(layers > 0 ? [field(5, tensor('w', [d, d], w))] : []),
    ...(extra?.tensors ?? []).map((t) => field(5, t)),
    field(11, valueInfo('input_ids', INT64, ['batch', 'seq'])),
    field(11, valueInfo('attention_mask', INT64, ['batch', 'seq'])),
    field(12, valueInfo('last_hidden_state', FLOAT, ['batch', 'seq', d])),
  ]);
  const model = concat([varintField(1, 7), field(7, graph), field(8, concat([field(1, str('')), varintField(2, 11)]))]);
  writeFileSync(join(dir, 'onnx', 'model.onnx'), model);
  return dir;
}

const FLOAT = 1;
const INT8 = 3;
const INT64 = 7;
const enc = new TextEncoder();

function varint(v: number): number[] {
  const out: number[] = [];
  for (; v >= 128; v = Math.floor(v / 128)) out.push((v % 128) | 128);
  out.push(v);
  return out;
}
function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
const str = (s: string): Uint8Array => enc.encode(s);
const field = (no: number, payload: Uint8Array): Uint8Array =>
  concat([Uint8Array.from([...varint(no * 8 + 2), ...varint(payload.length)]), payload]);
const varintField = (no: number, v: number): Uint8Array => Uint8Array.from([...varint(no * 8), ...varint(v)]);

function node(op: string, inputs: string[], outputs: string[], attrs: Uint8Array[] = []): Uint8Array {
  return concat([
    ...inputs.map((i) => field(1, str(i))),
    ...outputs.map((o) => field(2, str(o))),
    field(3, str(`${op}_${outputs[0]}`)),
    field(4, str(op)),
    ...attrs.map((a) => field(5, a)),
  ]);
}
const intAttr = (name: string, v: number): Uint8Array =>
  concat([field(1, str(name)), varintField(3, v), varintField(20, 2)]);
const intsAttr = (name: string, vs: number[]): Uint8Array =>
  concat([field(1, str(name)), ...vs.map((v) => varintField(8, v)), varintField(20, 7)]);

function tensor(name: string, dims: number[], values: Float32Array): Uint8Array {
  return concat([
    ...dims.map((x) => varintField(1, x)),
    varintField(2, FLOAT),
    field(8, str(name)),
    field(9, new Uint8Array(values.buffer)),
  ]);
}

function rawTensor(name: string, dims: number[], type: number, raw: Uint8Array): Uint8Array {
  return concat([...dims.map((x) => varintField(1, x)), varintField(2, type), field(8, str(name)), field(9, raw)]);
}

function valueInfo(name: string, elem: number, dims: Array<number | string>): Uint8Array {
  const shape = concat(dims.map((x) => field(1, typeof x === 'number' ? varintField(1, x) : field(2, str(x)))));
  const tensorType = concat([varintField(1, elem), field(2, shape)]);
  return concat([field(1, str(name)), field(2, field(1, tensorType))]);
}

/**
 * Just enough of the protobuf wire format to read an ONNX model's graph and
 * write an edited copy (onnx.proto3 field numbers; onnx/onnx, Apache-2.0).
 * Fields we do not edit are carried over as their original bytes, so a
 * rewrite never loses what this file does not understand. Pure: no I/O.
 */

/** One field of a message: its number, wire type and where its bytes lie in `buf`. */
export interface WireField {
  no: number;
  wire: number;
  /** The whole field, tag included: what is copied when the field is kept. */
  start: number;
  end: number;
  /** A varint's value, or a length-delimited field's payload range. */
  value: number;
  payloadStart: number;
}

export class WireError extends Error {}

function readVarint(buf: Uint8Array, pos: number): [number, number] {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    const b = buf[pos + i];
    if (b === undefined) throw new WireError('truncated varint');
    v += (b & 0x7f) * mul;
    if (b < 0x80) return [v, pos + i + 1];
    mul *= 128;
  }
  throw new WireError('varint longer than 10 bytes');
}

/** The fields of the message in buf[start, end), in order. */
export function readFields(buf: Uint8Array, start = 0, end = buf.length): WireField[] {
  const out: WireField[] = [];
  let pos = start;
  while (pos < end) {
    const fieldStart = pos;
    const [tag, p] = readVarint(buf, pos);
    const no = Math.floor(tag / 8);
    const wire = tag & 7;
    let value = 0;
    let payloadStart = p;
    if (wire === 0) [value, pos] = readVarint(buf, p);
    else if (wire === 1) pos = p + 8;
    else if (wire === 5) pos = p + 4;
    else if (wire === 2) {
      const [len, q] = readVarint(buf, p);
      payloadStart = q;
      value = len;
      pos = q + len;
    } else throw new WireError(`unsupported wire type ${wire}`);
    if (pos > end) throw new WireError('field runs past its message');
    out.push({ no, wire, start: fieldStart, end: pos, value, payloadStart });
  }
  return out;
}

const utf8 = new TextDecoder();
const encoder = new TextEncoder();

export function fieldString(buf: Uint8Array, f: WireField): string {
  return utf8.decode(buf.subarray(f.payloadStart, f.payloadStart + f.value));
}

/** The first string field numbered `no` inside message `f` ('' when it has none): a name, a domain. */
export function subString(buf: Uint8Array, f: WireField, no: number): string {
  const g = readFields(buf, f.payloadStart, f.payloadStart + f.value).find((x) => x.no === no && x.wire === 2);
  return g ? fieldString(buf, g) : '';
}

export function fieldBytes(buf: Uint8Array, f: WireField): Uint8Array {
  return buf.subarray(f.payloadStart, f.payloadStart + f.value);
}

/** NodeProto: inputs 1, outputs 2, name 3, op_type 4, domain 7. */
export interface NodeInfo {
  name: string;
  opType: string;
  domain: string;
  inputs: string[];
  outputs: string[];
}

export function readNode(buf: Uint8Array, f: WireField): NodeInfo {
  const node: NodeInfo = { name: '', opType: '', domain: '', inputs: [], outputs: [] };
  for (const g of readFields(buf, f.payloadStart, f.payloadStart + f.value)) {
    if (g.wire !== 2) continue;
    if (g.no === 1) node.inputs.push(fieldString(buf, g));
    else if (g.no === 2) node.outputs.push(fieldString(buf, g));
    else if (g.no === 3) node.name = fieldString(buf, g);
    else if (g.no === 4) node.opType = fieldString(buf, g);
    else if (g.no === 7) node.domain = fieldString(buf, g);
  }
  return node;
}

/** TensorProto: dims 1, data_type 2, float_data 4, name 8, raw_data 9, external data 13/14. */
export interface TensorInfo {
  name: string;
  dims: number[];
  dataType: number;
  /** The values of a float tensor stored in the file itself; undefined otherwise. */
  floats?: Float32Array;
}

export const FLOAT = 1;
export const INT32 = 6;

export function readTensor(buf: Uint8Array, f: WireField): TensorInfo {
  const t: TensorInfo = { name: '', dims: [], dataType: 0 };
  let raw: Uint8Array | undefined;
  let external = false;
  const packedFloats: number[] = [];
  for (const g of readFields(buf, f.payloadStart, f.payloadStart + f.value)) {
    if (g.no === 1 && g.wire === 0) t.dims.push(g.value);
    else if (g.no === 1 && g.wire === 2) {
      let p = g.payloadStart;
      while (p < g.payloadStart + g.value) {
        const [v, q] = readVarint(buf, p);
        t.dims.push(v);
        p = q;
      }
    } else if (g.no === 2 && g.wire === 0) t.dataType = g.value;
    else if (g.no === 8 && g.wire === 2) t.name = fieldString(buf, g);
    else if (g.no === 9 && g.wire === 2) raw = fieldBytes(buf, g);
    else if (g.no === 4 && g.wire === 2) {
      const b = fieldBytes(buf, g);
      const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
      for (let i = 0; i + 4 <= b.byteLength; i += 4) packedFloats.push(view.getFloat32(i, true));
    } else if ((g.no === 13 || g.no === 14) && g.value !== 0) external = true;
  }
  if (t.dataType === FLOAT && !external) {
    const n = t.dims.reduce((a, b) => a * b, 1);
    if (raw && raw.byteLength === n * 4) {
      // a copy: aligned, and independent of the file's buffer (a Node Buffer's slice is a view)
      const copy = new Uint8Array(raw.byteLength);
      copy.set(raw);
      t.floats = new Float32Array(copy.buffer, 0, n);
    } else if (!raw && packedFloats.length === n) t.floats = Float32Array.from(packedFloats);
  }
  return t;
}

// ---- writing ----

function varint(v: number): number[] {
  const out: number[] = [];
  let x = v;
  while (x >= 128) {
    out.push((x % 128) | 128);
    x = Math.floor(x / 128);
  }
  out.push(x);
  return out;
}

/** A length-delimited field whose payload is `parts`, concatenated. */
export function lengthField(no: number, parts: readonly Uint8Array[]): Uint8Array[] {
  const len = parts.reduce((n, p) => n + p.byteLength, 0);
  return [Uint8Array.from([...varint(no * 8 + 2), ...varint(len)]), ...parts];
}

function stringField(no: number, s: string): Uint8Array[] {
  return lengthField(no, [encoder.encode(s)]);
}

function varintField(no: number, v: number): Uint8Array {
  return Uint8Array.from([...varint(no * 8), ...varint(v)]);
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

export type Attribute = { name: string; int: number } | { name: string; float: number };

/** AttributeProto: name 1, f 2, i 3, type 20 (FLOAT 1, INT 2). */
function attributeBytes(a: Attribute): Uint8Array {
  if ('int' in a) return concat([...stringField(1, a.name), varintField(3, a.int), varintField(20, 2)]);
  const f = new Uint8Array(5);
  f[0] = 2 * 8 + 5;
  new DataView(f.buffer).setFloat32(1, a.float, true);
  return concat([...stringField(1, a.name), f, varintField(20, 1)]);
}

/** A whole `node` field (GraphProto field 1). */
export function nodeField(n: NodeInfo, attributes: readonly Attribute[] = []): Uint8Array {
  const parts = [
    ...n.inputs.flatMap((s) => stringField(1, s)),
    ...n.outputs.flatMap((s) => stringField(2, s)),
    ...stringField(3, n.name),
    ...stringField(4, n.opType),
    ...attributes.flatMap((a) => lengthField(5, [attributeBytes(a)])),
    ...(n.domain ? stringField(7, n.domain) : []),
  ];
  return concat(lengthField(1, parts));
}

/** A whole float `initializer` field (GraphProto field 5), values as raw little-endian data. */
export function floatTensorField(name: string, dims: readonly number[], values: Float32Array): Uint8Array {
  const raw = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  const parts = [
    ...dims.map((d) => varintField(1, d)),
    varintField(2, FLOAT),
    ...stringField(8, name),
    ...lengthField(9, [raw]),
  ];
  return concat(lengthField(5, parts));
}

/** A whole `opset_import` field (ModelProto field 8). */
export function opsetField(domain: string, version: number): Uint8Array {
  return concat(lengthField(8, [...stringField(1, domain), varintField(2, version)]));
}

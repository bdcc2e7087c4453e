import {
  concat,
  FLOAT,
  floatTensorField,
  INT32,
  lengthField,
  nodeField,
  opsetField,
  readFields,
  readNode,
  subString,
  readTensor,
  WireError,
  type NodeInfo,
  type TensorInfo,
  type WireField,
} from './onnx-proto.js';

/**
 * Fuses each BERT layer's self-attention into ONNX Runtime's `Attention`
 * contrib op (com.microsoft): Q, K and V packed into one MatMul, and the
 * reshapes, transposes, scaled scores, mask and softmax into one kernel.
 * ONNX Runtime's own optimiser does not find attention in the Hugging Face
 * exports (optimum, Xenova), and the graph it leaves runs a short query about
 * an eighth slower on a CPU (docs/lab-notes/2026-11-27-e5-query-latency-and-deepsearch-rl.md).
 *
 * Matched by the exports' node names (`/encoder/layer.N/attention/self/…`)
 * and checked structurally; whether the result computes the same thing is
 * checked by the caller, which runs both graphs on a probe batch before
 * trusting this one. Pure: bytes in, bytes out.
 */
export type FuseResult = { bytes: Uint8Array; layers: number } | { reason: string };

interface Graph {
  buf: Uint8Array;
  fields: WireField[];
  nodes: Map<WireField, NodeInfo>;
  inits: Map<string, WireField>;
  inputs: Set<string>;
  outputs: Set<string>;
}

const SELF = /^\/encoder\/layer\.(\d+)\/attention\/self\//;

export function fuseAttention(model: Uint8Array, numHeads: number): FuseResult {
  try {
    const top = readFields(model);
    const graphField = top.find((f) => f.no === 7 && f.wire === 2);
    if (!graphField) return { reason: 'the model has no graph' };
    if (top.some((f) => f.no === 8 && f.wire === 2 && subString(model, f, 1) === 'com.microsoft'))
      return { reason: 'the graph already uses ONNX Runtime contrib ops' };
    const g = readGraph(model, graphField);
    if (!g.inputs.has('attention_mask')) return { reason: 'the graph has no attention_mask input' };
    const edit = planLayers(g, numHeads);
    if ('reason' in edit) return edit;
    // one copy of the whole model: the graph's parts go straight into it
    const parts: Uint8Array[] = [];
    for (const f of top) {
      if (f === graphField) parts.push(...lengthField(7, graphParts(g, edit)));
      else parts.push(model.subarray(f.start, f.end));
    }
    parts.push(opsetField('com.microsoft', 1));
    return { bytes: concat(parts), layers: edit.layers };
  } catch (err) {
    if (err instanceof WireError) return { reason: `the file is not a readable ONNX model (${err.message})` };
    throw err;
  }
}

function readGraph(buf: Uint8Array, gf: WireField): Graph {
  const fields = readFields(buf, gf.payloadStart, gf.payloadStart + gf.value);
  const g: Graph = { buf, fields, nodes: new Map(), inits: new Map(), inputs: new Set(), outputs: new Set() };
  for (const f of fields) {
    if (f.wire !== 2) continue;
    if (f.no === 1) g.nodes.set(f, readNode(buf, f));
    else if (f.no === 5)
      g.inits.set(subString(buf, f, 8), f); // TensorProto.name
    else if (f.no === 11)
      g.inputs.add(subString(buf, f, 1)); // ValueInfoProto.name
    else if (f.no === 12) g.outputs.add(subString(buf, f, 1));
  }
  return g;
}

interface Plan {
  /** Node field → the node written in its place. */
  replace: Map<WireField, { info: NodeInfo; bytes: Uint8Array }>;
  removed: Set<WireField>;
  initializers: Uint8Array[];
  layers: number;
}

function planLayers(g: Graph, numHeads: number): Plan | { reason: string } {
  const byName = new Map<string, NodeInfo>();
  const fieldOf = new Map<NodeInfo, WireField>();
  const consumers = new Map<string, NodeInfo[]>();
  for (const [f, n] of g.nodes) {
    byName.set(n.name, n);
    fieldOf.set(n, f);
    for (const i of n.inputs) {
      const list = consumers.get(i);
      if (list) list.push(n);
      else consumers.set(i, [n]);
    }
  }
  const layerIds = [...new Set([...byName.keys()].flatMap((n) => SELF.exec(n)?.[1] ?? []))];
  if (layerIds.length === 0)
    return { reason: 'no /encoder/layer.N/attention/self/ nodes (not a Hugging Face BERT export)' };
  const plan: Plan = { replace: new Map(), removed: new Set(), initializers: [], layers: 0 };
  for (const id of layerIds) {
    const prefix = `/encoder/layer.${id}/attention/self/`;
    const q = projection(g, byName, `${prefix}query/`);
    const k = projection(g, byName, `${prefix}key/`);
    const v = projection(g, byName, `${prefix}value/`);
    if ('reason' in q) return q;
    if ('reason' in k) return k;
    if ('reason' in v) return v;
    const hidden = q.dims[0] as number;
    if (q.input !== k.input || q.input !== v.input) return { reason: `layer ${id}: Q, K and V read different inputs` };
    if (hidden % numHeads !== 0)
      return { reason: `layer ${id}: hidden size ${hidden} is not a multiple of ${numHeads} heads` };
    const dense = byName.get(`/encoder/layer.${id}/attention/output/dense/MatMul`);
    const context = dense?.inputs.find((i) => !g.inits.has(i));
    if (!context) return { reason: `layer ${id}: no attention/output/dense/MatMul` };
    const group = [...byName.values()].filter((n) => n.name.startsWith(prefix));
    const producer = group.find((n) => n.outputs.includes(context));
    if (!producer) return { reason: `layer ${id}: the attention output is not made inside attention/self` };
    for (const n of group)
      for (const o of n.outputs)
        if (o !== context && (g.outputs.has(o) || (consumers.get(o) ?? []).some((c) => !c.name.startsWith(prefix))))
          return { reason: `layer ${id}: ${o} is read outside the attention block` };
    const weights = new Float32Array(hidden * 3 * hidden);
    for (let r = 0; r < hidden; r++)
      [q, k, v].forEach((p, j) => weights.set(p.weight.subarray(r * hidden, (r + 1) * hidden), (r * 3 + j) * hidden));
    const bias = new Float32Array(3 * hidden);
    [q, k, v].forEach((p, j) => bias.set(p.bias, j * hidden));
    plan.initializers.push(floatTensorField(`${prefix}qkv_weight`, [hidden, 3 * hidden], weights));
    plan.initializers.push(floatTensorField(`${prefix}qkv_bias`, [3 * hidden], bias));
    const attention: NodeInfo = {
      name: `${prefix}Attention`,
      opType: 'Attention',
      domain: 'com.microsoft',
      inputs: [q.input, `${prefix}qkv_weight`, `${prefix}qkv_bias`, MASK],
      outputs: [context],
    };
    // the exports add (1 − mask) × float32's lowest value to the scores; the op's default is −10000
    const node = nodeField(attention, [
      { name: 'num_heads', int: numHeads },
      { name: 'mask_filter_value', float: -3.4028234663852886e38 },
    ]);
    for (const n of group) plan.removed.add(fieldOf.get(n) as WireField);
    plan.replace.set(fieldOf.get(producer) as WireField, { info: attention, bytes: node });
    plan.layers++;
  }
  return plan;
}

const MASK = 'attention_mask/int32';

interface Projection {
  input: string;
  dims: number[];
  weight: Float32Array;
  bias: Float32Array;
}

/** `MatMul(x, W)` then `Add(·, b)` with W [H, H] and b [H] float initializers. */
function projection(g: Graph, byName: Map<string, NodeInfo>, prefix: string): Projection | { reason: string } {
  const mm = byName.get(`${prefix}MatMul`);
  const add = byName.get(`${prefix}Add`);
  if (mm?.opType !== 'MatMul' || add?.opType !== 'Add')
    return { reason: `${prefix}: not a float MatMul + Add (an int8 file is left as it is)` };
  const w = tensorOf(
    g,
    mm.inputs.find((i) => g.inits.has(i)),
  );
  const b = tensorOf(
    g,
    add.inputs.find((i) => g.inits.has(i)),
  );
  const input = mm.inputs.find((i) => !g.inits.has(i));
  const hidden = w?.dims[0];
  if (!w?.floats || !b?.floats || !input || hidden === undefined || w.dims.length !== 2 || w.dims[1] !== hidden)
    return { reason: `${prefix}: the weights are not a square float matrix in the file` };
  if (b.dims.length !== 1 || b.dims[0] !== hidden) return { reason: `${prefix}: the bias is not [${hidden}]` };
  if (!add.inputs.includes(mm.outputs[0] as string)) return { reason: `${prefix}: Add does not read the MatMul` };
  return { input, dims: w.dims, weight: w.floats, bias: b.floats };
}

function tensorOf(g: Graph, name: string | undefined): TensorInfo | undefined {
  const f = name === undefined ? undefined : g.inits.get(name);
  if (!f) return undefined;
  const t = readTensor(g.buf, f);
  return t.dataType === FLOAT ? t : undefined;
}

/**
 * The graph with each layer's attention block replaced by its Attention node
 * (where the block's output was made, so the order stays topological), the
 * mask cast to int32 first, and the nodes and weights nothing reads any more
 * (the exports' shared mask arithmetic, the separate Q, K and V weights) dropped.
 */
function graphParts(g: Graph, plan: Plan): Uint8Array[] {
  const cast: NodeInfo = {
    name: `${MASK}/Cast`,
    opType: 'Cast',
    domain: '',
    inputs: ['attention_mask'],
    outputs: [MASK],
  };
  // the nodes to write, in order, each with its bytes
  const nodes: Array<{ info: NodeInfo; bytes: Uint8Array }> = [
    { info: cast, bytes: nodeField(cast, [{ name: 'to', int: INT32 }]) },
  ];
  for (const [f, n] of g.nodes) {
    const r = plan.replace.get(f);
    if (r) nodes.push(r);
    else if (!plan.removed.has(f)) nodes.push({ info: n, bytes: g.buf.subarray(f.start, f.end) });
  }
  let live = nodes;
  for (;;) {
    const read = new Set<string>([...g.outputs, ...live.flatMap((n) => n.info.inputs)]);
    const next = live.filter((n) => n.info.outputs.some((o) => read.has(o)));
    if (next.length === live.length) break;
    live = next;
  }
  const read = new Set<string>(live.flatMap((n) => n.info.inputs));
  const unread = new Set([...g.inits].filter(([name]) => !read.has(name)).map(([, f]) => f));
  const parts: Uint8Array[] = [];
  let nodesWritten = false;
  for (const f of g.fields) {
    if (f.no === 1 && f.wire === 2) {
      if (!nodesWritten) parts.push(...live.map((n) => n.bytes));
      nodesWritten = true;
      continue;
    }
    if (unread.has(f)) continue;
    parts.push(g.buf.subarray(f.start, f.end));
  }
  parts.push(...plan.initializers);
  return parts;
}

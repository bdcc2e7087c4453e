import { halvesToFloats } from '../util/half.js';

/**
 * Pure pooling and normalisation. `hidden` is a row-major [batch, seqLen,
 * dim] tensor; `mask[b * seqLen + t]` is 1 for real tokens, 0 for padding.
 * Sums run in float64 so results match a PyTorch float32 reference to ~1e-7.
 */
export function meanPool(
  hidden: Float32Array,
  mask: ArrayLike<number>,
  batch: number,
  seqLen: number,
  dim: number,
): Float32Array[] {
  const out: Float32Array[] = [];
  const acc = new Float64Array(dim);
  for (let b = 0; b < batch; b++) {
    acc.fill(0);
    let count = 0;
    for (let t = 0; t < seqLen; t++) {
      if (!mask[b * seqLen + t]) continue;
      count++;
      const base = (b * seqLen + t) * dim;
      for (let d = 0; d < dim; d++) (acc[d] as number) += hidden[base + d] as number;
    }
    const v = new Float32Array(dim);
    const denom = Math.max(count, 1e-9);
    for (let d = 0; d < dim; d++) v[d] = (acc[d] as number) / denom;
    out.push(v);
  }
  return out;
}

/** The first token's vector of each row ([CLS] pooling, for models that use it). */
export function clsPool(hidden: Float32Array, batch: number, seqLen: number, dim: number): Float32Array[] {
  const out: Float32Array[] = [];
  for (let b = 0; b < batch; b++) out.push(hidden.slice(b * seqLen * dim, b * seqLen * dim + dim));
  return out;
}

/** Scales `v` in place to unit L2 norm (a zero vector stays zero). */
export function l2Normalize(v: Float32Array): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += (v[i] as number) * (v[i] as number);
  const n = Math.sqrt(s);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / n;
  return v;
}

/** fp16 tensor data → float32. */
export function halfArrayToFloat(bits: Uint16Array): Float32Array {
  return halvesToFloats(bits);
}

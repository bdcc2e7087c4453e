import type { IvfHeader } from './ivf-format.js';
import type { IvfKernels } from './ivf-kernels.js';
import type { Quantizer, QuantizerMeans } from './ivf-quantizer.js';

/** Bytes of one vector's build record: its code, its factor (f32), its list (u32) and <r, c> (f32). */
export function recordBytes(dimPadded: number): number {
  return dimPadded / 8 + 12;
}

/**
 * The build records of `m` rows of `dim` floats: each row's list (nearest mean), the sign bits
 * of its rotated residual r from that mean c, its factor ‖r‖² / Σ|r'ᵢ|, which makes a query's
 * table sum an inner product estimate (ivf-index.ts), and <r, c>. Runs on the build's thread or a worker's.
 */
export function encodeRows(
  raw: Float32Array,
  dim: number,
  shape: Pick<IvfHeader, 'dimPadded'>,
  quantizer: Quantizer,
  kernels: IvfKernels,
  means: QuantizerMeans,
): { records: Uint8Array; lists: Uint32Array } {
  const dp = shape.dimPadded;
  const m = raw.length / dim;
  const rows = new Float32Array(m * dp);
  for (let i = 0; i < m; i++) rows.set(raw.subarray(i * dim, (i + 1) * dim), i * dp);
  const lists = quantizer.assign(rows);
  const fine = means.fine;
  const norms = new Float64Array(m);
  const along = new Float64Array(m);
  for (let i = 0; i < m; i++) {
    const c = (lists[i] as number) * dp;
    let s = 0;
    let rc = 0;
    for (let d = 0; d < dp; d++) {
      const mean = fine[c + d] as number;
      const r = (rows[i * dp + d] as number) - mean;
      rows[i * dp + d] = r;
      s += r * r;
      rc += r * mean;
    }
    norms[i] = s;
    along[i] = rc;
  }
  const { codes, sums } = kernels.rotateEncode(rows);
  const codeBytes = dp / 8;
  const rec = recordBytes(dp);
  const out = Buffer.alloc(m * rec);
  for (let i = 0; i < m; i++) {
    out.set(codes.subarray(i * codeBytes, (i + 1) * codeBytes), i * rec);
    const sum = sums[i] as number;
    out.writeFloatLE(sum > 0 ? (norms[i] as number) / sum : 0, i * rec + codeBytes);
    out.writeUInt32LE(lists[i] as number, i * rec + codeBytes + 4);
    out.writeFloatLE(along[i] as number, i * rec + codeBytes + 8);
  }
  return { records: out, lists };
}

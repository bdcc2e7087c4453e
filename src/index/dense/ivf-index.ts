import { closeSync, openSync } from 'node:fs';
import { RetrieverError } from '../../errors.js';
import { TopK } from '../../core/top-k.js';
import { isAllowed, type ChunkFilter } from '../../core/contracts.js';
import { preadFully } from '../../util/pread.js';
import { payloadBytes, readIvfHead, type IvfHeader } from './ivf-format.js';
import { IvfKernels } from './ivf-kernels.js';
import { Quantizer } from './ivf-quantizer.js';

/**
 * An IVF index with 1-bit RaBitQ codes (ivf-format.ts), opened for search. Only the list means,
 * the rotation and the list table are held in memory; each probed list is read from the file
 * when it is scanned (pread: the page cache keeps the lists in use, shared by every process that
 * serves the index), so the codes of wiki-18 (2.2 GB) cost the process no resident memory.
 *
 * The estimate of <o, q> for a vector o of list l with mean c, residual r = o − c, rotated
 * r' = Pr and sign bits b: <c, q> + <r, c> + ‖r‖²/Σ|r'ᵢ| · (2·Σ_{bᵢ=1} q'ᵢ − Σ q'ᵢ), with
 * q' = P(q − c) (RaBitQ, Gao and Long 2024, for inner products: its error grows with ‖q − c‖
 * and shrinks as 1/√dim). The sum over set bits is read from 4-bit tables of q', quantised to
 * bytes, made for each list probed. A file of version 1 has no <r, c>: q' = Pq there, whose
 * error grows with ‖q‖ (on real e5 vectors, 0.84 of the true top 10 among 500 candidates
 * against 0.99; BENCHMARKS.md "On real vectors").
 */
export class IvfIndex {
  readonly head: IvfHeader;
  private readonly fd: number;
  private readonly centroids: Float32Array;
  private readonly offsets: Float64Array;
  private readonly sizes: Uint32Array;
  private readonly kernels: IvfKernels;
  private readonly quantizer: Quantizer;
  /** fillTables' scratch: each table's lowest sum. */
  private readonly lows: Float64Array;

  constructor(
    readonly path: string,
    expect: { dim: number; count: number },
    fixHint: string,
  ) {
    const h = readIvfHead(path, expect, fixHint);
    this.head = h.head;
    this.centroids = h.centroids;
    this.offsets = h.offsets;
    this.sizes = h.sizes;
    const blocks = Math.ceil(h.head.maxList / 16);
    this.kernels = new IvfKernels(h.head.dimPadded, h.head.window, h.head.rounds, h.signs, blocks);
    this.quantizer = new Quantizer(this.kernels, { coarse: h.coarse, fine: h.centroids, children: h.children });
    this.fd = openSync(path, 'r');
    this.lows = new Float64Array(h.head.dimPadded / 4);
  }

  get lists(): number {
    return this.head.lists;
  }

  /**
   * The `candidates` chunk nums with the highest estimated inner product with `query` (a unit
   * vector) among the `probes` lists nearest it, the filter's alone where one is given.
   */
  candidates(query: Float32Array, probes: number, candidates: number, filter?: ChunkFilter): number[] {
    const h = this.head;
    const dim = h.dimPadded;
    const qp = new Float32Array(dim);
    qp.set(query);
    const lists = this.nearestLists(qp, Math.min(probes, h.lists));
    const residual = h.version >= 2;
    // the rotated query, or (version 2) its rotated residual from each probed list's mean
    const rotated = new Float32Array(residual ? lists.length * dim : dim);
    if (residual) {
      lists.forEach((l, j) => {
        const c = l * dim;
        for (let d = 0; d < dim; d++) rotated[j * dim + d] = (qp[d] as number) - (this.centroids[c + d] as number);
      });
    } else rotated.set(qp);
    this.kernels.rotate(rotated);
    let tables = residual ? undefined : this.fillTables(rotated);
    const top = new TopK(candidates);
    const codeRow = h.dimPadded / 8;
    for (let j = 0; j < lists.length; j++) {
      const l = lists[j] as number;
      const n = this.sizes[l] as number;
      if (n === 0) continue;
      let cq = 0;
      const c = l * dim;
      for (let d = 0; d < dim; d++) cq += (this.centroids[c + d] as number) * (qp[d] as number);
      if (residual) tables = this.fillTables(rotated.subarray(j * dim, (j + 1) * dim));
      const { delta, base, qsum } = tables as { delta: number; base: number; qsum: number };
      const blocks = Math.ceil(n / 16);
      const bytes = payloadBytes(n, h.dimPadded, h.version);
      const at = this.offsets[l] as number;
      const view = this.kernels.work(bytes);
      if (preadFully(this.fd, view, bytes, at) < bytes) throw this.damaged(`list ${l} ends early`);
      const tail = blocks * codeRow * 16;
      const buf = view.buffer;
      const factors = new Float32Array(buf, view.byteOffset + tail, n);
      const ids = new Uint32Array(buf, view.byteOffset + tail + n * 4, n);
      const along = residual ? new Float32Array(buf, view.byteOffset + tail + n * 8, n) : undefined;
      const sums = this.kernels.scan(0, blocks);
      for (let i = 0; i < n; i++) {
        const num = ids[i] as number;
        if (filter && !isAllowed(filter, num)) continue;
        const s = delta * (sums[i] as number) + base;
        const est = cq + (along ? (along[i] as number) : 0) + (factors[i] as number) * (2 * s - qsum);
        if (top.accepts(est, num)) top.push(est, num);
      }
    }
    const out = top.result().map((x) => x.num);
    for (const num of out) if (num >= h.count) throw this.damaged(`a list names chunk ${num} of ${h.count}`);
    return out;
  }

  close(): void {
    closeSync(this.fd);
  }

  /**
   * The query's 4-bit tables (ivf-kernels scanBlocks): for code byte p, the sums of q' over each
   * subset of dims 8p..8p+3 and of 8p+4..8p+7, shifted to start at 0 and quantised to 0..127 on
   * one scale, so a scan's u16 sum s gives Σ_{bits set} q'ᵢ ≈ delta·s + base.
   */
  private fillTables(qr: Float32Array): { delta: number; base: number; qsum: number } {
    const halves = qr.length >> 2;
    const lows = this.lows;
    let range = 0;
    let qsum = 0;
    for (let m = 0; m < halves; m++) {
      const a = qr[4 * m] as number;
      const b = qr[4 * m + 1] as number;
      const c = qr[4 * m + 2] as number;
      const d = qr[4 * m + 3] as number;
      qsum += a + b + c + d;
      const lo = (a < 0 ? a : 0) + (b < 0 ? b : 0) + (c < 0 ? c : 0) + (d < 0 ? d : 0);
      const hi = (a > 0 ? a : 0) + (b > 0 ? b : 0) + (c > 0 ? c : 0) + (d > 0 ? d : 0);
      lows[m] = lo;
      if (hi - lo > range) range = hi - lo;
    }
    const delta = range > 0 ? range / 127 : 1;
    const inv = 1 / delta;
    const lut = this.kernels.lut();
    let base = 0;
    for (let m = 0; m < halves; m++) {
      const lo = lows[m] as number;
      base += lo;
      const a = qr[4 * m] as number;
      const b = qr[4 * m + 1] as number;
      const c = qr[4 * m + 2] as number;
      const d = qr[4 * m + 3] as number;
      // the sum of each subset of the four (bit k of e takes coordinate k), less lo, in steps of delta
      const o = m * 16;
      const z = -lo;
      const ab = a + b;
      const cd = c + d;
      lut[o] = (z * inv + 0.5) | 0;
      lut[o + 1] = ((z + a) * inv + 0.5) | 0;
      lut[o + 2] = ((z + b) * inv + 0.5) | 0;
      lut[o + 3] = ((z + ab) * inv + 0.5) | 0;
      lut[o + 4] = ((z + c) * inv + 0.5) | 0;
      lut[o + 5] = ((z + a + c) * inv + 0.5) | 0;
      lut[o + 6] = ((z + b + c) * inv + 0.5) | 0;
      lut[o + 7] = ((z + ab + c) * inv + 0.5) | 0;
      lut[o + 8] = ((z + d) * inv + 0.5) | 0;
      lut[o + 9] = ((z + a + d) * inv + 0.5) | 0;
      lut[o + 10] = ((z + b + d) * inv + 0.5) | 0;
      lut[o + 11] = ((z + ab + d) * inv + 0.5) | 0;
      lut[o + 12] = ((z + cd) * inv + 0.5) | 0;
      lut[o + 13] = ((z + a + cd) * inv + 0.5) | 0;
      lut[o + 14] = ((z + b + cd) * inv + 0.5) | 0;
      lut[o + 15] = ((z + ab + cd) * inv + 0.5) | 0;
    }
    return { delta, base, qsum };
  }

  private nearestLists(query: Float32Array, probes: number): Uint32Array {
    if (probes >= this.head.lists) return Uint32Array.from({ length: this.head.lists }, (_, i) => i);
    return this.quantizer.probe(query, probes);
  }

  private damaged(why: string): RetrieverError {
    return new RetrieverError('INDEX_CORRUPT', `${this.path} is damaged (${why}): rebuild the index`);
  }
}

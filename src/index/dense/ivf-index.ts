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
    const halves = qr.length / 4;
    const lows = new Float64Array(halves);
    let range = 0;
    let qsum = 0;
    for (let m = 0; m < halves; m++) {
      let lo = 0;
      let hi = 0;
      for (let k = 0; k < 4; k++) {
        const v = qr[m * 4 + k] as number;
        qsum += v;
        if (v < 0) lo += v;
        else hi += v;
      }
      lows[m] = lo;
      range = Math.max(range, hi - lo);
    }
    const delta = range > 0 ? range / 127 : 1;
    const lut = this.kernels.lut();
    let base = 0;
    const sub = new Float64Array(16);
    for (let m = 0; m < halves; m++) {
      const lo = lows[m] as number;
      base += lo;
      // each subset's sum from the subset without its lowest bit: 15 additions a table
      lut[m * 16] = Math.round(-lo / delta);
      for (let e = 1; e < 16; e++) {
        const low = e & -e;
        const s = (sub[e ^ low] as number) + (qr[m * 4 + 31 - Math.clz32(low)] as number);
        sub[e] = s;
        lut[m * 16 + e] = Math.round((s - lo) / delta);
      }
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

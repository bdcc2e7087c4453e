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
 * serves the index), so the codes of wiki-18 (2.2 GB) cost the process no resident memory; or,
 * `inMemory`, all lists are read into the kernels' memory at open, sparing each query the copy.
 *
 * The estimate of <o, q> for a vector o of list l with mean c, residual r = o − c, rotated
 * r' = Pr and sign bits b: <c, q> + <r, c> + ‖r‖²/Σ|r'ᵢ| · (2·Σ_{bᵢ=1} q'ᵢ − Σ q'ᵢ), with
 * q' = P(q − c) (RaBitQ, Gao and Long 2024, for inner products: its error grows with ‖q − c‖
 * and shrinks as 1/√dim). The sum over set bits is read from 4-bit tables of q', quantised to
 * bytes, made for each list probed. A file of version 1 has no <r, c>: q' = Pq there, whose
 * error grows with ‖q‖ (on real e5 vectors, 0.84 of the true top 10 among 500 candidates
 * against 0.99; BENCHMARKS.md "On real vectors").
 */
/**
 * RaBitQ's bound on the error of a 1-bit estimate of <r, q − c> (Gao and Long 2024, theorem 3.2):
 * ‖r‖·‖q − c‖·√(1 − x²)/x · ε₀/√(D − 1), x = <ō, o> = Σ|r'ᵢ|/(√D·‖r‖), with probability at
 * least 1 − 2·exp(−c₀·ε₀²). With the code's factor F = ‖r‖²/Σ|r'ᵢ| = ‖r‖/(√D·x) that is
 * F·‖q − c‖·√(1 − x²)·ε₀·√(D/(D − 1)), and x concentrates at √(2/π) for 1-bit codes, so
 * √(1 − x²) is about 0.60: the paper's ε₀ = 1.9 makes 1.15 of F·‖q − c‖. Measured on real e5
 * vectors (200,000, 128 of 512 lists, 500 candidates), 1.2 lost 0.25% of recall@10 against
 * re-scoring every candidate, 1.5 lost 0.01%, 1.8 none: 1.8 (ε₀ about 3).
 */
const ERROR_BOUND = 1.8;

/** The most list bytes held in memory (`inMemory`): WebAssembly's 4 GB less room for the means and work. */
const MAX_HELD_BYTES = 3.5 * 2 ** 30;

export class IvfIndex {
  readonly head: IvfHeader;
  private readonly fd: number;
  private readonly offsets: Float64Array;
  private readonly sizes: Uint32Array;
  private readonly kernels: IvfKernels;
  private readonly quantizer: Quantizer;
  /** ε of the upper bounds `bounded` gives, in units of F·‖q − c‖ (ERROR_BOUND). */
  private readonly errorBound: number;
  /** Where the lists' payloads are held in the kernels' memory (`inMemory`), else undefined. */
  private readonly heldAt: number | undefined;

  /**
   * `inMemory` reads every list's payload into memory at open (the codes of 21M vectors: 2.3 GB),
   * so a query copies nothing, where they fit (about 30M vectors of 768-d); otherwise each probed
   * list is read from the page cache per query.
   */
  constructor(
    readonly path: string,
    expect: { dim: number; count: number },
    fixHint: string,
    opts: { inMemory?: boolean; maxHeldBytes?: number; errorBound?: number } = {},
  ) {
    this.errorBound = opts.errorBound ?? ERROR_BOUND;
    const h = readIvfHead(path, expect, fixHint);
    this.head = h.head;
    this.offsets = h.offsets;
    this.sizes = h.sizes;
    const blocks = Math.ceil(h.head.maxList / 16);
    this.kernels = new IvfKernels(h.head.dimPadded, h.head.window, h.head.rounds, h.signs, blocks);
    this.quantizer = new Quantizer(this.kernels, { coarse: h.coarse, fine: h.centroids, children: h.children });
    this.fd = openSync(path, 'r');
    try {
      this.heldAt = opts.inMemory ? this.readLists(opts.maxHeldBytes ?? MAX_HELD_BYTES) : undefined;
    } catch (err) {
      closeSync(this.fd);
      throw err;
    }
  }

  /** True when the lists are held in memory rather than read per query. */
  get inMemory(): boolean {
    return this.heldAt !== undefined;
  }

  get lists(): number {
    return this.head.lists;
  }

  /**
   * The `candidates` chunk nums with the highest estimated inner product with `query` (a unit
   * vector) among the `probes` lists nearest it, the filter's alone where one is given.
   */
  candidates(query: Float32Array, probes: number, candidates: number, filter?: ChunkFilter): number[] {
    return this.select(query, probes, candidates, filter)
      .result()
      .map((x) => x.num);
  }

  /**
   * `candidates`, each with an upper bound of its inner product with `query` (its estimate plus
   * RaBitQ's error bound, below), highest bound first: re-scoring in that order can stop at the
   * first whose bound is under the k-th exact score found.
   */
  bounded(
    query: Float32Array,
    probes: number,
    candidates: number,
    filter?: ChunkFilter,
  ): Array<{ num: number; upper: number }> {
    return this.select(query, probes, candidates, filter)
      .entries()
      .map((x) => ({ num: x.num, upper: x.extra }))
      .sort((a, b) => b.upper - a.upper || a.num - b.num);
  }

  private select(query: Float32Array, probes: number, candidates: number, filter?: ChunkFilter): TopK {
    const h = this.head;
    const dim = h.dimPadded;
    const qp = new Float32Array(dim);
    qp.set(query);
    let qq = 0;
    for (const x of query) qq += x * x;
    const lists = this.nearestLists(qp, Math.min(probes, h.lists));
    const residual = h.version >= 2;
    // each probed list's rotated residual q − c (version 2) and <c, q>; version 1 reads Pq alone
    const prep = this.kernels.listsOfQuery(qp, lists, this.quantizer.meansAt, residual);
    let tables: { delta: number; base: number; qsum: number } | undefined;
    if (!residual) {
      const rotated = qp.slice();
      this.kernels.rotate(rotated);
      tables = this.kernels.tables(rotated);
    }
    const top = new TopK(candidates);
    const codeRow = h.dimPadded / 8;
    const first = this.offsets[0] as number;
    for (let j = 0; j < lists.length; j++) {
      const l = lists[j] as number;
      const n = this.sizes[l] as number;
      if (n === 0) continue;
      const cq = prep.dots[j] as number;
      // the error bound's scale: ‖q − c‖ = √(‖q‖² − 2<c, q> + ‖c‖²) (version 2) or ‖q‖ (version 1)
      let qNorm = Math.sqrt(qq);
      if (residual) {
        tables = this.kernels.tables(prep.rotated.subarray(j * dim, (j + 1) * dim));
        qNorm = Math.sqrt(Math.max(0, qq - 2 * cq + (this.quantizer.meanNormsSquared[l] as number)));
      }
      const blocks = Math.ceil(n / 16);
      const at = this.offsets[l] as number;
      let listAt: number;
      if (this.heldAt !== undefined) listAt = this.heldAt + (at - first);
      else {
        const bytes = payloadBytes(n, h.dimPadded, h.version);
        const view = this.kernels.work(bytes);
        if (preadFully(this.fd, view, bytes, at) < bytes) throw this.damaged(`list ${l} ends early`);
        listAt = this.kernels.workAddress;
      }
      // payload: codes in blocks of 16, then n factors, n chunk nums and (version 2) n <r, c>
      const tail = listAt + blocks * codeRow * 16;
      this.kernels.scan(listAt, blocks);
      const { keep, est } = this.kernels.estimate(n, tail, residual ? tail + n * 8 : 0, {
        ...(tables as { delta: number; base: number; qsum: number }),
        cq,
        floor: top.threshold(),
      });
      const ids = new Uint32Array(keep.buffer, tail + n * 4, n);
      const factors = new Float32Array(keep.buffer, tail, n);
      const bound = this.errorBound * qNorm;
      for (let k = 0; k < keep.length; k++) {
        const i = keep[k] as number;
        const num = ids[i] as number;
        if (filter && !isAllowed(filter, num)) continue;
        const e = est[k] as number;
        if (top.accepts(e, num)) top.push(e, num, e + bound * Math.abs(factors[i] as number));
      }
    }
    for (const x of top.entries())
      if (x.num >= h.count) throw this.damaged(`a list names chunk ${x.num} of ${h.count}`);
    return top;
  }

  close(): void {
    closeSync(this.fd);
  }

  /**
   * Reads every list's payload into memory held by the kernels; its address, or undefined where
   * they would not fit in WebAssembly's 4 GB beside the rest (then they are read per query).
   */
  private readLists(maxBytes: number): number | undefined {
    const first = this.offsets[0] as number;
    const total = (this.offsets[this.head.lists] as number) - first;
    if (total > maxBytes) return undefined;
    let at: number;
    try {
      at = this.kernels.hold(total);
    } catch {
      return undefined; // the memory would not grow: the lists are read per query instead
    }
    const step = 64 << 20;
    for (let done = 0; done < total; done += step) {
      const bytes = Math.min(step, total - done);
      const view = this.kernels.held(at + done, bytes);
      if (preadFully(this.fd, view, bytes, first + done) < bytes) throw this.damaged('its lists end early');
    }
    return at;
  }

  private nearestLists(query: Float32Array, probes: number): Uint32Array {
    if (probes >= this.head.lists) return Uint32Array.from({ length: this.head.lists }, (_, i) => i);
    return this.quantizer.probe(query, probes);
  }

  private damaged(why: string): RetrieverError {
    return new RetrieverError('INDEX_CORRUPT', `${this.path} is damaged (${why}): rebuild the index`);
  }
}

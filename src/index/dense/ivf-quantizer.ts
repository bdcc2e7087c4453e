import { TopK } from '../../core/top-k.js';
import type { IvfKernels, Resident } from './ivf-kernels.js';
import { apportion, assign, lloyd, type KmeansOptions } from './kmeans.js';

/** Above this many lists, two levels: √lists coarse means, each with the lists of its part. */
const FLAT_MAX = 1024;
/** Coarse means searched for a vector's list when it is built: its two nearest. */
const ASSIGN_COARSE = 2;
/**
 * A query's probed lists are chosen among the lists of its nearest coarse means, enough of them
 * to hold this many times the probes: on real e5 vectors (65,536, 2,048 lists, every vector of
 * the probed lists re-scored), 32 probes held 0.58 of the true top 10 at 4 times, 0.67 at 16 and
 * 0.68 with every list scored; 128 probes 0.86 at 4, 0.88 from 8 on.
 */
const PROBE_COVER = 16;

/** The lists' means, grouped under coarse means: the lists of coarse mean j are [children[j], children[j + 1]). */
export interface QuantizerMeans {
  coarse: Float32Array;
  fine: Float32Array;
  children: Uint32Array;
}

/**
 * Trains the lists' means on `sample` (rows of `kernels.dim` floats): Lloyd's k-means, in two
 * levels past FLAT_MAX lists (√lists coarse means, then each coarse part split into lists in
 * proportion to its size), since an assignment to 16,384 means of 393k rows is 5·10¹²
 * multiply-adds an iteration, and to √16,384 + about as many a hundredth of that.
 */
export async function trainMeans(sample: Float32Array, lists: number, opts: KmeansOptions): Promise<QuantizerMeans> {
  const dim = opts.kernels.dim;
  const n = sample.length / dim;
  if (lists <= FLAT_MAX) {
    const fine = await lloyd(sample, lists, { ...opts, onProgress: (d) => opts.onProgress?.(d) });
    const mean = new Float32Array(dim);
    for (let i = 0; i < n; i++)
      for (let d = 0; d < dim; d++) mean[d] = (mean[d] as number) + (sample[i * dim + d] as number) / n;
    return { coarse: mean, fine, children: Uint32Array.of(0, lists) };
  }
  const k1 = Math.round(Math.sqrt(lists));
  const coarse = await lloyd(sample, k1, { ...opts, onProgress: (d) => opts.onProgress?.(0.3 * d) });
  const labels = new Uint32Array(n);
  await assign(sample, coarse, labels, opts);
  const groups: number[][] = Array.from({ length: k1 }, () => []);
  for (let i = 0; i < n; i++) (groups[labels[i] as number] as number[]).push(i);
  const shares = apportion(
    groups.map((g) => g.length),
    lists,
  );
  const fine = new Float32Array(lists * dim);
  const children = new Uint32Array(k1 + 1);
  let at = 0;
  let done = 0;
  for (let j = 0; j < k1; j++) {
    children[j] = at;
    const g = groups[j] as number[];
    const kj = shares[j] as number;
    if (kj === 0) continue;
    const sub = new Float32Array(g.length * dim);
    g.forEach((row, i) => sub.set(sample.subarray(row * dim, (row + 1) * dim), i * dim));
    const { onProgress: _whole, ...quiet } = opts;
    const means = await lloyd(sub, kj, quiet);
    for (let c = 0; c < kj; c++) {
      // a part with fewer rows than lists repeats its last mean (an empty list costs nothing)
      const from = Math.min(c, means.length / dim - 1);
      fine.set(means.subarray(from * dim, (from + 1) * dim), (at + c) * dim);
    }
    at += kj;
    done += g.length;
    opts.onProgress?.(0.3 + (0.7 * done) / n);
  }
  children[k1] = at;
  return { coarse, fine, children };
}

/**
 * Finds lists: a vector's (its nearest list mean, among the lists of its two nearest coarse
 * means) and a query's nearest lists (among those of enough of its nearest coarse means). All
 * means live in the kernels' memory.
 */
export class Quantizer {
  private readonly coarse: Resident;
  private readonly fine: Resident;
  readonly lists: number;
  /** ‖c‖² of each list's mean, from the biases (−‖c‖²/2) made resident with them. */
  readonly meanNormsSquared: Float32Array;

  constructor(
    private readonly kernels: IvfKernels,
    private readonly means: QuantizerMeans,
  ) {
    this.coarse = kernels.resident(means.coarse);
    this.fine = kernels.resident(means.fine);
    this.lists = this.fine.count;
    const biases = kernels.held(this.fine.biasAt, this.lists * 4);
    this.meanNormsSquared = new Float32Array(biases.buffer, biases.byteOffset, this.lists).map((b) => -2 * b);
  }

  /** The address of the lists' means in the kernels' memory (rows of kernels.dim floats). */
  get meansAt(): number {
    return this.fine.at;
  }

  get coarseCount(): number {
    return this.coarse.count;
  }

  /** The list of each row of `rows` (kernels.dim floats each). */
  assign(rows: Float32Array): Uint32Array {
    const dim = this.kernels.dim;
    const n = rows.length / dim;
    const k1 = this.coarse.count;
    const best = new Uint32Array(n);
    const score = new Float32Array(n).fill(-Infinity);
    if (k1 === 1) {
      this.kernels.nearestResident(rows, this.fine, 0, this.fine.count, best, score);
      return best;
    }
    const picks = Math.min(ASSIGN_COARSE, k1);
    const chosen = this.kernels.nearestTwoResident(rows, this.coarse, 0, k1);
    for (let p = 0; p < picks; p++) {
      const groups = new Map<number, number[]>();
      for (let i = 0; i < n; i++) {
        const j = chosen[i * 2 + p] as number;
        let g = groups.get(j);
        if (!g) groups.set(j, (g = []));
        g.push(i);
      }
      for (const [j, members] of groups) {
        const from = this.means.children[j] as number;
        const count = (this.means.children[j + 1] as number) - from;
        if (count === 0) continue;
        const sub = new Float32Array(members.length * dim);
        const b = new Uint32Array(members.length);
        const s = new Float32Array(members.length);
        members.forEach((i, m) => {
          sub.set(rows.subarray(i * dim, (i + 1) * dim), m * dim);
          b[m] = best[i] as number;
          s[m] = score[i] as number;
        });
        this.kernels.nearestResident(sub, this.fine, from, count, b, s);
        members.forEach((i, m) => {
          best[i] = b[m] as number;
          score[i] = s[m] as number;
        });
      }
    }
    return best;
  }

  /**
   * The `probes` lists whose means have the highest inner product with `query` (kernels.dim
   * floats), best first, from the lists of its nearest coarse means: enough of them to hold
   * PROBE_COVER times `probes` lists. By inner product, not by L2 as vectors were assigned: on
   * real e5 vectors the probed lists then hold more of the true top 10 (lab note
   * 2026-11-29-ivf-probe-order).
   */
  probe(query: Float32Array, probes: number): Uint32Array {
    const k1 = this.coarse.count;
    const children = this.means.children;
    const cs = this.kernels.scoresResident(query, this.coarse, 0, k1);
    const order = Uint32Array.from({ length: k1 }, (_, j) => j).sort(
      (a, b) => (cs[b] as number) - (cs[a] as number) || a - b,
    );
    const top = new TopK(probes);
    let covered = 0;
    for (const j of order) {
      if (covered >= PROBE_COVER * probes) break;
      const from = children[j] as number;
      const count = (children[j + 1] as number) - from;
      if (count === 0) continue;
      const fs = this.kernels.scoresResident(query, this.fine, from, count, true);
      for (let i = 0; i < count; i++) {
        const s = fs[i] as number;
        if (top.accepts(s, from + i)) top.push(s, from + i);
      }
      covered += count;
    }
    return Uint32Array.from(top.result(), (h) => h.num);
  }
}

import type { IvfKernels } from './ivf-kernels.js';

/** Lloyd iterations at each level (the lists' quality changes little past a dozen). */
const ITERATIONS = 10;
/** Rows a kernel call takes at a time (a stop is heard between calls). */
const CHUNK = 8192;

export interface KmeansOptions {
  kernels: IvfKernels;
  /** Labels rows by their nearest mean elsewhere (worker threads); by default on `kernels`. */
  nearest?: (points: Float32Array, means: Float32Array) => Promise<Uint32Array>;
  signal?: AbortSignal;
  /** Hears each iteration's end: the share of this run done, 0 to 1. */
  onProgress?: (done: number) => void;
}

/**
 * `k` means of the rows of `points` (dim floats each, `kernels.dim`) by squared L2, Lloyd's
 * algorithm with an exact assignment step on SIMD (ivf-kernels nearest). Deterministic: seeded
 * with evenly spaced rows; an empty cluster is re-seeded at a row of the largest.
 */
export async function lloyd(points: Float32Array, k: number, opts: KmeansOptions): Promise<Float32Array> {
  const dim = opts.kernels.dim;
  const n = points.length / dim;
  const c = new Float32Array(k * dim);
  for (let j = 0; j < k; j++) {
    const row = Math.floor((j * n) / k);
    c.set(points.subarray(row * dim, (row + 1) * dim), j * dim);
  }
  if (k >= n) return c;
  const sums = new Float64Array(k * dim);
  const counts = new Uint32Array(k);
  const labels = new Uint32Array(n);
  for (let it = 0; it < ITERATIONS; it++) {
    await assign(points, c, labels, opts);
    sums.fill(0);
    counts.fill(0);
    for (let i = 0; i < n; i++) {
      const l = labels[i] as number;
      counts[l] = (counts[l] as number) + 1;
      const base = l * dim;
      const p = i * dim;
      for (let d = 0; d < dim; d++) sums[base + d] = (sums[base + d] as number) + (points[p + d] as number);
    }
    let largest = 0;
    for (let j = 1; j < k; j++) if ((counts[j] as number) > (counts[largest] as number)) largest = j;
    for (let j = 0; j < k; j++) {
      const cnt = counts[j] as number;
      if (cnt === 0) {
        const row = labels.indexOf(largest, (j * 7919) % n);
        const at = (row >= 0 ? row : labels.indexOf(largest)) * dim;
        for (let d = 0; d < dim; d++) c[j * dim + d] = points[at + d] as number;
        continue;
      }
      for (let d = 0; d < dim; d++) c[j * dim + d] = (sums[j * dim + d] as number) / cnt;
    }
    opts.onProgress?.((it + 1) / ITERATIONS);
  }
  return c;
}

/** Each row's nearest mean, CHUNK rows a call, a turn of the event loop between calls. */
export async function assign(
  points: Float32Array,
  means: Float32Array,
  labels: Uint32Array,
  opts: KmeansOptions,
): Promise<void> {
  const dim = opts.kernels.dim;
  const n = points.length / dim;
  const nearest = opts.nearest;
  if (nearest) {
    // every chunk in flight at once: the pool spreads them over its threads
    const parts: Array<Promise<void>> = [];
    for (let at = 0; at < n; at += CHUNK) {
      const m = Math.min(CHUNK, n - at);
      const from = at;
      parts.push(nearest(points.slice(at * dim, (at + m) * dim), means).then((l) => labels.set(l, from)));
    }
    await Promise.all(parts);
    opts.signal?.throwIfAborted();
    return;
  }
  for (let at = 0; at < n; at += CHUNK) {
    await new Promise((r) => setImmediate(r));
    opts.signal?.throwIfAborted();
    const m = Math.min(CHUNK, n - at);
    const best = labels.subarray(at, at + m);
    opts.kernels.nearestOf(points.subarray(at * dim, (at + m) * dim), means, best, new Float32Array(m));
  }
}

/**
 * `total` split in proportion to `sizes` (largest remainders), each nonempty size getting at
 * least one, the sum exactly `total`.
 */
export function apportion(sizes: number[], total: number): number[] {
  const n = sizes.reduce((a, b) => a + b, 0);
  const raw = sizes.map((s) => (n > 0 ? (s * total) / n : 0));
  const out = raw.map((r, i) => ((sizes[i] as number) > 0 ? Math.max(1, Math.floor(r)) : 0));
  let left = total - out.reduce((a, b) => a + b, 0);
  const order = raw.map((r, i) => [r - Math.floor(r), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (let i = 0; left > 0 && order.length > 0; i = (i + 1) % order.length) {
    const j = (order[i] as readonly [number, number])[1];
    if ((sizes[j] as number) > 0) {
      out[j] = (out[j] as number) + 1;
      left--;
    }
  }
  while (left < 0) {
    let j = 0;
    for (let i = 1; i < out.length; i++) if ((out[i] as number) > (out[j] as number)) j = i;
    out[j] = (out[j] as number) - 1;
    left++;
  }
  return out;
}

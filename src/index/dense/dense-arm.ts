import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { RetrieverError } from '../../errors.js';
import type { ScoredHit } from '../../core/top-k.js';
import { TopK } from '../../core/top-k.js';
import { isAllowed, type ChunkFilter, type DenseArm } from '../../core/contracts.js';
import { INDEX_FILES } from '../layout.js';
import type { DenseManifest } from '../manifest.js';
import { AnnIndex, exactInnerProduct } from './ann.js';
import { GraphFormatError, readGraphLinks } from './graph-file.js';
import { IvfIndex } from './ivf-index.js';
import { VectorReader } from './vectors-file.js';

export interface DenseArmOptions {
  /** Server-wide efSearch override; the manifest's value otherwise. */
  expansionSearch?: number;
  /** IVF: lists probed per query, over the manifest's value. */
  probes?: number;
  /** IVF: candidates re-scored exactly per query (at least twice k), over the manifest's value. */
  rescore?: number;
  /** Serve the ANN file from the page cache (HNSW memory-mapped, IVF lists read per query) instead of RAM. */
  mmap: boolean;
  /** ANN candidates re-scored exactly from the stored vectors, as a multiple of k. */
  rescoreFactor: number;
  /** Threads one batch of queries (`searchMany`) walks the graph with; default: every core. */
  searchThreads?: number;
  /**
   * Walk the graph file's links before opening it (graph-file.ts): set when its
   * bytes were not all checksummed first (`--verify sizes`, `sample`, or a
   * background pass), since USearch follows a damaged link out of its map.
   */
  checkGraph?: boolean;
}

/** Filters allowing at most this many chunks are searched exactly. */
const EXACT_FILTER_MAX = 8192;

/**
 * The dense arm of one corpus. Scores are always the exact cosine of the
 * query and the stored chunk vector (recomputed in float64), also for ANN
 * hits, so `dense_score` never carries quantisation error. Small corpora keep
 * every vector in memory and search exhaustively (SIMD); large ones walk the
 * HNSW graph, then re-score the candidates.
 */
export function openDenseArm(dir: string, m: DenseManifest, fixHint: string, opts: DenseArmOptions): DenseArm {
  const dim = m.encoder.dim;
  const vectors = new VectorReader(join(dir, INDEX_FILES.vectors), dim, m.vectors.dtype, m.vectors.count);
  try {
    if (!m.ann) return new ExactArm(m.encoder.id, vectors);
    if (m.ann.library === 'retriever-mcp') {
      const probes = opts.probes ?? m.ann.probes;
      const ivf = new IvfIndex(join(dir, INDEX_FILES.ivf), { dim, count: m.vectors.count }, fixHint, {
        inMemory: !opts.mmap,
      });
      const rescore = opts.rescore ?? m.ann.rescore;
      const held = ivf.inMemory
        ? ' held in memory'
        : opts.mmap
          ? ''
          : ' (read per query: the memory to hold them could not be had)';
      const about = `IVF of ${m.ann.bits}-bit codes${held}, ${m.ann.lists} lists, ${probes} probed, ${rescore} re-scored from ${m.vectors.dtype} vectors`;
      return new IvfArm(m.encoder.id, vectors, ivf, probes, rescore, about);
    }
    const annPath = join(dir, INDEX_FILES.ann);
    if (opts.checkGraph) checkGraph(annPath, m.vectors.count, fixHint);
    const ann = AnnIndex.open(
      annPath,
      dim,
      {
        connectivity: m.ann.connectivity,
        expansionAdd: m.ann.expansion_add,
        expansionSearch: m.ann.expansion_search,
        quantization: m.ann.quantization,
      },
      { mmap: opts.mmap, ...(opts.expansionSearch ? { expansionSearch: opts.expansionSearch } : {}) },
    );
    if (ann.size !== m.vectors.count) {
      throw new RetrieverError(
        'INDEX_CORRUPT',
        `${annPath} holds ${ann.size} vectors, the manifest says ${m.vectors.count}: ${fixHint}`,
      );
    }
    const ef = opts.expansionSearch ?? m.ann.expansion_search;
    const about = `HNSW (${m.ann.quantization}, M ${m.ann.connectivity}, efSearch ${ef}), ${opts.rescoreFactor}×top_k re-scored from ${m.vectors.dtype} vectors`;
    return new AnnArm(
      m.encoder.id,
      vectors,
      ann,
      opts.rescoreFactor,
      opts.searchThreads ?? availableParallelism(),
      about,
    );
  } catch (err) {
    vectors.close();
    throw err;
  }
}

/** The graph's structure, walked once: a link out of range is INDEX_CORRUPT here, not a crash in a search. */
function checkGraph(path: string, count: number, fixHint: string): void {
  let live: number;
  try {
    const g = readGraphLinks(path);
    live = g.nodes - g.deleted;
  } catch (err) {
    if (!(err instanceof GraphFormatError)) throw err;
    throw new RetrieverError('INDEX_CORRUPT', `${err.message}: the HNSW graph is damaged; ${fixHint}`);
  }
  if (live !== count)
    throw new RetrieverError('INDEX_CORRUPT', `${path} holds ${live} vectors, the manifest says ${count}: ${fixHint}`);
}

/**
 * Pushes the exact top k of `query` over the rows of `matrix` (row i is chunk
 * `first + i`) into `top`: SIMD preselection of k + 16 rows with slack, then
 * exact float64 scores, so ties and scores match whichever block a row is in.
 */
export function pushExactTop(
  top: TopK,
  matrix: Float32Array,
  dim: number,
  query: Float32Array,
  k: number,
  first = 0,
): void {
  const n = matrix.length / dim;
  for (const local of exactInnerProduct(matrix, dim, query, Math.min(n, k + 16))) {
    top.push(dot(query, matrix, local * dim, dim), first + local);
  }
}

function dot(q: Float32Array, m: Float32Array, offset: number, dim: number): number {
  let s = 0;
  for (let d = 0; d < dim; d++) s += (q[d] as number) * (m[offset + d] as number);
  return s;
}

class ExactArm implements DenseArm {
  readonly description: string;
  private readonly matrix: Float32Array;
  private readonly dim: number;
  private readonly n: number;

  constructor(
    readonly encoderId: string,
    vectors: VectorReader,
  ) {
    this.dim = vectors.dim;
    this.n = vectors.count;
    this.matrix = vectors.readRange(0, vectors.count);
    this.description = `exact, ${this.n} ${vectors.dtype} vectors in memory`;
    vectors.close();
  }

  search(query: Float32Array, k: number, filter?: ChunkFilter): ScoredHit[] {
    checkDim(query, this.dim);
    const top = new TopK(Math.min(k, this.n));
    if (filter) {
      for (const i of filter.nums) {
        const s = dot(query, this.matrix, i * this.dim, this.dim);
        if (top.accepts(s, i)) top.push(s, i);
      }
      return top.result();
    }
    pushExactTop(top, this.matrix, this.dim, query, k);
    return top.result();
  }

  searchMany(queries: readonly Float32Array[], k: number, filter?: ChunkFilter): ScoredHit[][] {
    return queries.map((q) => this.search(q, k, filter));
  }

  close(): void {}
}

class AnnArm implements DenseArm {
  constructor(
    readonly encoderId: string,
    private readonly vectors: VectorReader,
    private readonly ann: AnnIndex,
    private readonly rescoreFactor: number,
    private readonly threads: number,
    readonly description: string,
  ) {}

  search(query: Float32Array, k: number, filter?: ChunkFilter): ScoredHit[] {
    checkDim(query, this.vectors.dim);
    const n = this.vectors.count;
    if (filter) {
      const count = filter.nums.length;
      if (count <= EXACT_FILTER_MAX) return this.rescore(query, filter.nums, k);
      // oversample in proportion to the filter's selectivity, then fall back to exact
      const want = Math.min(n, Math.ceil((k * this.rescoreFactor * n) / count));
      const cand = this.ann.search(query, want).nums.filter((num) => isAllowed(filter, num));
      if (cand.length >= k) return this.rescore(query, cand, k);
      return this.rescore(query, filter.nums, k);
    }
    const cand = this.ann.search(query, this.depth(k)).nums;
    return this.rescore(query, cand, k);
  }

  searchMany(queries: readonly Float32Array[], k: number, filter?: ChunkFilter): ScoredHit[][] {
    if (filter || queries.length < 2) return queries.map((q) => this.search(q, k, filter));
    for (const q of queries) checkDim(q, this.vectors.dim);
    // no more threads than queries: USearch starts each one per call
    const cands = this.ann.searchMany(queries, this.depth(k), Math.min(this.threads, queries.length));
    return queries.map((q, i) => this.rescore(q, cands[i] as number[], k));
  }

  /** How many graph candidates `k` hits are re-scored from. */
  private depth(k: number): number {
    return Math.max(k, Math.min(this.vectors.count, k * this.rescoreFactor));
  }

  close(): void {
    this.vectors.close();
  }

  private rescore(query: Float32Array, nums: ArrayLike<number> & Iterable<number>, k: number): ScoredHit[] {
    const top = new TopK(Math.min(k, nums.length));
    for (const num of nums) {
      const s = this.vectors.dotRow(num, query);
      if (top.accepts(s, num)) top.push(s, num);
    }
    return top.result();
  }
}

/**
 * The IVF index's arm: the lists nearest the query are scanned for the `rescore` vectors of
 * highest estimated inner product (ivf-index.ts), which are re-scored from the stored vectors.
 * A small filter is searched exactly; a larger one scans more lists in proportion to its
 * selectivity, and exactly where that leaves fewer than k.
 */
class IvfArm implements DenseArm {
  /** Rows re-scored by the last search (of at most the candidates asked for). */
  lastRescored = 0;

  constructor(
    readonly encoderId: string,
    private readonly vectors: VectorReader,
    private readonly ivf: IvfIndex,
    private readonly probes: number,
    private readonly rescoreCount: number,
    readonly description: string,
  ) {}

  search(query: Float32Array, k: number, filter?: ChunkFilter): ScoredHit[] {
    checkDim(query, this.vectors.dim);
    const want = Math.max(this.rescoreCount, 2 * k);
    if (!filter) return this.rescore(query, this.ivf.bounded(query, this.probes, want), k);
    if (filter.nums.length <= EXACT_FILTER_MAX) return rescoreExact(this.vectors, query, filter.nums, k);
    const widen = Math.min(16, Math.ceil(this.vectors.count / filter.nums.length));
    const cand = this.ivf.bounded(query, this.probes * widen, want, filter);
    if (cand.length >= k) return this.rescore(query, cand, k);
    return rescoreExact(this.vectors, query, filter.nums, k);
  }

  searchMany(queries: readonly Float32Array[], k: number, filter?: ChunkFilter): ScoredHit[][] {
    return queries.map((q) => this.search(q, k, filter));
  }

  /**
   * The exact top k of candidates taken highest upper bound first, stopping at the first whose
   * bound is under the k-th exact score: the rest cannot enter (as far as the bound holds), so
   * most of them are never read. Where every vector is a candidate, every one is read: exact.
   */
  private rescore(query: Float32Array, cand: Array<{ num: number; upper: number }>, k: number): ScoredHit[] {
    const top = new TopK(Math.min(k, cand.length));
    const every = cand.length >= this.vectors.count;
    let read = 0;
    for (const c of cand) {
      if (!every && c.upper < top.threshold()) break;
      const s = this.vectors.dotRow(c.num, query);
      read++;
      if (top.accepts(s, c.num)) top.push(s, c.num);
    }
    this.lastRescored = read;
    return top.result();
  }

  close(): void {
    this.ivf.close();
    this.vectors.close();
  }
}

/** The exact top k of `nums` by the stored vectors' inner product with `query`. */
function rescoreExact(
  vectors: VectorReader,
  query: Float32Array,
  nums: ArrayLike<number> & Iterable<number>,
  k: number,
): ScoredHit[] {
  const top = new TopK(Math.min(k, nums.length));
  for (const num of nums) {
    const s = vectors.dotRow(num, query);
    if (top.accepts(s, num)) top.push(s, num);
  }
  return top.result();
}

function checkDim(q: Float32Array, dim: number): void {
  if (q.length !== dim) throw new RetrieverError('MODEL', `query vector has ${q.length} dimensions, the index ${dim}`);
}

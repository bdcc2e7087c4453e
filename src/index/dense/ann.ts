import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { exactSearch, Index, MetricKind, ScalarKind, type BatchMatches, type Matches } from 'usearch';
import { RetrieverError } from '../../errors.js';

/**
 * The only importer of the ANN library (USearch): an HNSW graph over unit
 * vectors with cosine distance, quantised to f32/f16/i8, saved to one file
 * and memory-mapped for serving so processes share the page cache.
 */
export type AnnQuantization = 'f32' | 'f16' | 'i8';

export interface AnnParams {
  /** HNSW M: graph degree. */
  connectivity: number;
  /** efConstruction: candidate list size while inserting. */
  expansionAdd: number;
  /** efSearch: candidate list size while searching (≥ k is enforced per query). */
  expansionSearch: number;
  quantization: AnnQuantization;
}

/** Graph vectors are stored as i8 unless a build says otherwise (re-scoring keeps scores exact). */
export const DEFAULT_QUANTIZATION: AnnQuantization = 'i8';

/** A size-dependent default: `value` for corpora of at most `upTo` chunks (the last tier has no bound). */
interface Tier {
  upTo: number;
  value: number;
}

/**
 * HNSW M by corpus size. At 768-d i8 a node takes 916 / 948 / 980 bytes at
 * M 16 / 20 / 24 (measured on 2M-vector graphs), so wiki-18's 21,015,324
 * chunks need 19.3 / 19.9 / 20.6 GB: M 20 is the densest graph that keeps it
 * within 20 GB. Below, M 24 reaches a recall level at a narrower walk than
 * M 16 (BENCHMARKS.md "HNSW defaults").
 */
const CONNECTIVITY_TIERS: Tier[] = [
  { upTo: 20_000_000, value: 24 },
  { upTo: Infinity, value: 20 },
];

/**
 * efConstruction by corpus size. Recall at a fixed efSearch falls fast as a
 * corpus grows, and a wider construction moves the whole curve by
 * about 2.5 doublings of the corpus, for several times the graph's build time
 * (BENCHMARKS.md, the efConstruction sections). Up to 2M chunks the default
 * graph holds its recall at its default efSearch, so the build stays fast there.
 */
const EXPANSION_ADD_TIERS: Tier[] = [
  { upTo: 2_000_000, value: 128 },
  { upTo: Infinity, value: 512 },
];

/**
 * efSearch stored in a new index, by corpus size, for a graph of M ≥ 24 and
 * for a sparser one. Larger corpora get a wider walk, a denser graph a
 * narrower one; above 10M chunks 1536, extrapolated from the growth between
 * 1M and 2M (BENCHMARKS.md "HNSW defaults").
 */
const EXPANSION_SEARCH_TIERS: { dense: Tier[]; sparse: Tier[] } = {
  dense: [
    { upTo: 1_000_000, value: 128 },
    { upTo: 2_000_000, value: 384 },
    { upTo: 10_000_000, value: 768 },
    { upTo: Infinity, value: 1536 },
  ],
  sparse: [
    { upTo: 1_000_000, value: 384 },
    { upTo: 10_000_000, value: 768 },
    { upTo: Infinity, value: 1536 },
  ],
};
/** The M from which a graph counts as dense for its efSearch tier. */
const DENSE_GRAPH_M = 24;

function pick(tiers: readonly Tier[], chunks: number): number {
  return (tiers.find((t) => chunks <= t.upTo) ?? (tiers[tiers.length - 1] as Tier)).value;
}

/** "24 up to 20M chunks, 20 above": a tier table as help text says it. */
function describeTiers(tiers: readonly Tier[]): string {
  const size = (n: number): string => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`);
  return tiers.map((t) => (t.upTo === Infinity ? `${t.value} above` : `${t.value} up to ${size(t.upTo)}`)).join(', ');
}

/** The M a build uses when none is given. */
export function defaultConnectivity(chunks: number): number {
  return pick(CONNECTIVITY_TIERS, chunks);
}

/** The efConstruction a build uses when none is given. */
export function defaultExpansionAdd(chunks: number): number {
  return pick(EXPANSION_ADD_TIERS, chunks);
}

/** The efSearch a build stores when none is given, for the graph's M. */
export function defaultExpansionSearch(chunks: number, connectivity = defaultConnectivity(chunks)): number {
  return pick(connectivity >= DENSE_GRAPH_M ? EXPANSION_SEARCH_TIERS.dense : EXPANSION_SEARCH_TIERS.sparse, chunks);
}

/** Help text for the ANN defaults, generated from the tier tables above (chunks). */
export const ANN_DEFAULTS_HELP = {
  connectivity: `default by chunks: ${describeTiers(CONNECTIVITY_TIERS)}`,
  expansionAdd: `default by chunks: ${describeTiers(EXPANSION_ADD_TIERS)}`,
  expansionSearch:
    `default by chunks, with M ≥ ${DENSE_GRAPH_M}: ${describeTiers(EXPANSION_SEARCH_TIERS.dense)}; ` +
    `with a smaller M: ${describeTiers(EXPANSION_SEARCH_TIERS.sparse)}`,
};

const SCALARS: Record<AnnQuantization, ScalarKind> = { f32: ScalarKind.F32, f16: ScalarKind.F16, i8: ScalarKind.I8 };
const SCALAR_BYTES: Record<AnnQuantization, number> = { f32: 4, f16: 2, i8: 1 };

/**
 * Why a file cannot be a saved graph of `dim`-d vectors, or undefined. USearch
 * 2.25 trusts the row count and width at the head of its file (u32 rows, u32
 * bytes per row, then the rows) and crashes the process on a file that is not
 * its own, so they are checked against the file's size first.
 */
export function checkGraphFile(path: string, dim: number, quantization: AnnQuantization): string | undefined {
  const head = Buffer.alloc(8);
  let size: number;
  try {
    const fd = openSync(path, 'r');
    try {
      size = fstatSync(fd).size;
      if (readSync(fd, head, 0, 8, 0) < 8) return `${path} is too short to be a graph (${size} bytes)`;
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    return `cannot read ${path}: ${(err as Error).message}`;
  }
  const rows = head.readUInt32LE(0);
  const width = head.readUInt32LE(4);
  const want = dim * SCALAR_BYTES[quantization];
  if (width !== want) return `${path} holds rows of ${width} bytes, not ${dim}-d ${quantization} (${want} bytes)`;
  if (rows === 0 || 8 + rows * width > size) return `${path} is truncated or not a graph (${rows} rows, ${size} bytes)`;
  return undefined;
}

export interface AnnHits {
  nums: number[];
  distances: Float32Array;
}

function newIndex(dim: number, p: AnnParams, expansionSearch = p.expansionSearch): Index {
  return new Index({
    dimensions: dim,
    metric: MetricKind.Cos,
    quantization: SCALARS[p.quantization],
    connectivity: p.connectivity,
    expansion_add: p.expansionAdd,
    expansion_search: expansionSearch,
    multi: false,
  });
}

/** Incremental HNSW construction; rows are added in batches with `threads` threads. */
export class AnnBuilder {
  private readonly index: Index;

  constructor(
    readonly dim: number,
    readonly params: AnnParams,
  ) {
    this.index = newIndex(dim, params);
  }

  add(firstNum: number, rows: Float32Array, threads: number): void {
    const n = rows.length / this.dim;
    const keys = new BigUint64Array(n);
    for (let i = 0; i < n; i++) keys[i] = BigInt(firstNum + i);
    this.index.add(keys, rows, threads);
  }

  /**
   * A graph saved by `save` part way through a build, loaded to take more
   * rows. Only a graph holding exactly chunks 0 … size−1 is taken (rows go in
   * in num order), so the build continues at num `size`; otherwise the
   * reason it cannot be.
   */
  static resume(path: string, dim: number, params: AnnParams): { builder: AnnBuilder } | { reason: string } {
    const bad = checkGraphFile(path, dim, params.quantization);
    if (bad !== undefined) return { reason: bad };
    const b = new AnnBuilder(dim, params);
    try {
      b.index.load(path);
    } catch (err) {
      return { reason: `cannot load ${path}: ${(err as Error).message}` };
    }
    const n = b.index.size();
    const [first, last, next] = b.index.contains(BigUint64Array.of(0n, BigInt(n - 1), BigInt(n))) as boolean[];
    if (!first || !last || next) return { reason: `${path} does not hold exactly chunks 0 to ${n - 1}` };
    return { builder: b };
  }

  get size(): number {
    return this.index.size();
  }

  /**
   * Removes each node and adds it again, on one thread, so that it is
   * linked anew: a node no link points to gets in-links from its new
   * neighbours (docs/lab-notes/2026-11-24-hnsw-orphans.md: every orphan of three 100k builds came
   * back). The removed slot is reused, so the graph keeps its size.
   */
  reinsert(nums: readonly number[], rowOf: (num: number) => Float32Array): void {
    for (const num of nums) {
      const key = BigInt(num);
      this.index.remove(key);
      this.index.add(key, rowOf(num), 1);
    }
  }

  save(path: string): void {
    this.index.save(path);
  }
}

/** A built index opened for search (memory-mapped by default). */
export class AnnIndex {
  private constructor(
    private readonly index: Index,
    readonly dim: number,
  ) {}

  static open(
    path: string,
    dim: number,
    params: AnnParams,
    opts: { mmap: boolean; expansionSearch?: number },
  ): AnnIndex {
    const bad = checkGraphFile(path, dim, params.quantization);
    if (bad !== undefined)
      throw new RetrieverError('INDEX_CORRUPT', `cannot open ANN index: ${bad}: rebuild the index`);
    const index = newIndex(dim, params, opts.expansionSearch ?? params.expansionSearch);
    try {
      if (opts.mmap) index.view(path);
      else index.load(path);
    } catch (err) {
      throw new RetrieverError(
        'INDEX_CORRUPT',
        `cannot open ANN index ${path}: ${(err as Error).message}: rebuild the index`,
        { cause: err },
      );
    }
    if (index.dimensions() !== dim) {
      throw new RetrieverError(
        'INDEX_INCOMPATIBLE',
        `${path} holds ${index.dimensions()}-d vectors, the manifest says ${dim}: rebuild the index`,
      );
    }
    return new AnnIndex(index, dim);
  }

  get size(): number {
    return this.index.size();
  }

  search(query: Float32Array, k: number): AnnHits {
    const m = this.index.search(query, k, 1);
    return { nums: Array.from(m.keys, Number), distances: m.distances };
  }

  /** Candidate chunk numbers for several queries at once, the queries spread over `threads` threads. */
  searchMany(queries: readonly Float32Array[], k: number, threads: number): number[][] {
    if (queries.length === 1) return [this.search(queries[0] as Float32Array, k).nums];
    const matrix = new Float32Array(queries.length * this.dim);
    queries.forEach((q, i) => matrix.set(q, i * this.dim));
    const m = this.index.search(matrix, k, threads) as BatchMatches;
    return queries.map((_, i) => {
      const nums: number[] = [];
      const count = Number(m.counts[i]);
      for (let j = 0; j < count; j++) nums.push(Number(m.keys[i * k + j]));
      return nums;
    });
  }
}

/**
 * usearch 2.25's exactSearch reads a typed array from the start of its
 * ArrayBuffer and ignores byteOffset, so a view into a larger buffer (a query
 * vector out of one batched encoder reply) would be read as the wrong vector.
 * Hand it a standalone copy whenever the view does not cover its buffer.
 */
function standalone(a: Float32Array): Float32Array {
  return a.byteOffset === 0 && a.byteLength === a.buffer.byteLength ? a : a.slice();
}

/** Brute-force nearest neighbours by inner product over an in-memory matrix (SIMD). */
export function exactInnerProduct(matrix: Float32Array, dim: number, query: Float32Array, k: number): number[] {
  if (matrix.length === 0 || k <= 0) return [];
  const m: Matches | BatchMatches = exactSearch(
    standalone(matrix),
    standalone(query),
    dim,
    Math.min(k, matrix.length / dim),
    MetricKind.IP,
    1,
  );
  const keys = m.keys;
  const out: number[] = [];
  for (const key of keys) if (key !== 0xffffffffffffffffn) out.push(Number(key));
  return out;
}

/**
 * EXPERIMENT, not used by the product (bench/experiments/bm25-maxscore.ts measures it
 * against the exhaustive scorer; DESIGN.md explains why it was not adopted).
 *
 * Dynamic pruning for BM25 (MaxScore, Turtle & Flood 1995, with block skips):
 * the exact top k of exhaustive scoring while most postings of frequent terms
 * are never decoded.
 *
 * Query terms are ordered by their score upper bound. Once the top k is full
 * with threshold θ, the terms whose bounds add up to less than θ are
 * "non-essential": a document that has none of the other terms cannot enter,
 * so candidates come from the essential terms only, and the non-essential
 * lists are probed for a candidate (jumping whole blocks of postings) only
 * while its partial score plus their remaining bounds can still beat θ.
 *
 * The postings format is unchanged: a block table (last doc, end byte and
 * the largest tf/(tf + K) of every 128 postings) is derived from a list the
 * first time a query needs it and kept in a bounded cache.
 */

import { readPosting, type PostingRead } from '../../src/index/bm25/postings-codec.js';

/** Postings per block of the derived skip table. */
export const BLOCK_POSTINGS = 128;

/** Lists shorter than this get a per-query table (cheap) instead of a cached one. */
const CACHE_MIN_DF = 4096;

export interface BlockTable {
  /** Blocks in the list. */
  n: number;
  /** Last doc of each block. */
  lastDoc: Uint32Array;
  /** Byte offset just past each block, within the list. */
  byteEnd: Uint32Array;
  /** max tf / (tf + K(len)) over each block (the term weight not applied). */
  maxScore: Float64Array;
  /** The largest of maxScore. */
  listMax: number;
}

/** Scans a list once and derives its block table. */
export function buildBlockTable(
  bytes: Uint8Array,
  nbytes: number,
  df: number,
  norms: Uint8Array,
  normTable: Float32Array,
): BlockTable {
  const nb = Math.max(1, Math.ceil(df / BLOCK_POSTINGS));
  const lastDoc = new Uint32Array(nb);
  const byteEnd = new Uint32Array(nb);
  const maxScore = new Float64Array(nb);
  let listMax = 0;
  let pos = 0;
  let doc = 0;
  let inBlock = 0;
  let blk = 0;
  let best = 0;
  const p: PostingRead = { gap: 0, tf: 0, next: 0 };
  while (pos < nbytes) {
    readPosting(bytes, pos, p);
    pos = p.next;
    doc += p.gap;
    const tf = p.tf;
    const s = tf / (tf + (normTable[norms[doc] as number] as number));
    if (s > best) best = s;
    if (++inBlock === BLOCK_POSTINGS || pos >= nbytes) {
      if (blk < nb) {
        lastDoc[blk] = doc;
        byteEnd[blk] = pos;
        maxScore[blk] = best;
      }
      if (best > listMax) listMax = best;
      blk++;
      inBlock = 0;
      best = 0;
    }
  }
  return { n: Math.min(blk, nb), lastDoc, byteEnd, maxScore, listMax };
}

/** Block tables of long lists, least recently used dropped first, bounded in bytes. */
export class BlockCache {
  private readonly map = new Map<string, BlockTable>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get size(): number {
    return this.map.size;
  }

  get(term: string): BlockTable | undefined {
    const t = this.map.get(term);
    if (t) {
      this.map.delete(term);
      this.map.set(term, t);
    }
    return t;
  }

  set(term: string, table: BlockTable): void {
    const cost = table.n * 16 + 64;
    if (cost > this.maxBytes) return;
    this.map.set(term, table);
    this.bytes += cost;
    for (const [k, v] of this.map) {
      if (this.bytes <= this.maxBytes) break;
      this.map.delete(k);
      this.bytes -= v.n * 16 + 64;
    }
  }
}

export function shouldCache(df: number): boolean {
  return df >= CACHE_MIN_DF;
}

export const END_DOC = 2 ** 32;

/** A posting-list cursor over one query term, with block skips. */
export class TermCursor {
  /** Current doc (END_DOC when the list is used up) and its tf. */
  cur = -1;
  tf = 0;
  private pos = 0;
  private doc = 0;
  private blk = 0;
  private readonly read: PostingRead = { gap: 0, tf: 0, next: 0 };

  constructor(
    /** Position of the term in the query (the order scores are summed in). */
    readonly j: number,
    /** qtf · idf. */
    readonly weight: number,
    private readonly bytes: Uint8Array,
    private readonly nbytes: number,
    readonly blocks: BlockTable,
  ) {}

  /** weight × the largest tf/(tf + K) in the list: no document gets more from this term. */
  get upperBound(): number {
    return this.weight * this.blocks.listMax;
  }

  next(): void {
    if (this.pos >= this.nbytes) {
      this.cur = END_DOC;
      return;
    }
    readPosting(this.bytes, this.pos, this.read);
    this.pos = this.read.next;
    this.doc += this.read.gap;
    this.cur = this.doc;
    this.tf = this.read.tf;
  }

  /** Moves to the first posting with doc ≥ target, skipping whole blocks that end before it. */
  advanceTo(target: number): void {
    if (this.cur >= target) return;
    const t = this.blocks;
    let b = this.blk;
    while (b < t.n && (t.lastDoc[b] as number) < target) b++;
    if (b >= t.n) {
      this.cur = END_DOC;
      this.pos = this.nbytes;
      return;
    }
    if (b > this.blk) {
      this.blk = b;
      const start = t.byteEnd[b - 1] as number;
      if (start > this.pos) {
        this.pos = start;
        this.doc = t.lastDoc[b - 1] as number;
      }
    }
    do this.next();
    while (this.cur < target);
  }
}

/** Minimal view of the top-k heap the search needs. */
export interface TopKLike {
  accepts(score: number, num: number): boolean;
  push(score: number, num: number): void;
  /** The k-th best score once k hits are held, else -Infinity. */
  threshold(): number;
}

// Bounds are inflated by this relative slack, so that float rounding (the
// exhaustive path sums in float32, in query order) can never prune a
// document that belongs in the top k.
const SLACK = 1 + 1e-5;

/** Documents per window of the windowed MaxScore. */
const WINDOW = 1 << 13;

/** Reusable per-searcher buffers for maxScoreSearch. */
export class MaxScoreScratch {
  readonly wacc = new Float64Array(WINDOW);
  readonly touched = new Int32Array(WINDOW);
  contrib = new Float64Array(WINDOW * 8);

  ensureTerms(m: number): Float64Array {
    if (this.contrib.length < WINDOW * m) this.contrib = new Float64Array(WINDOW * m);
    return this.contrib;
  }
}

/**
 * Windowed MaxScore over `cursors` (fresh, before their first posting), in
 * the manner of Lucene's MaxScoreBulkScorer. The doc space is walked in
 * windows of WINDOW docs; inside one, the essential terms' postings are
 * accumulated term at a time (as cheap per posting as exhaustive scoring),
 * then each touched doc in ascending order either falls short of θ on its
 * partial score plus the non-essential bounds, or has the non-essential
 * lists probed (whole blocks before it are skipped). θ and the essential
 * set are updated after every window.
 *
 * A doc's score is summed in query-term order with float32 rounding after
 * each term, exactly as the exhaustive path accumulates it, so both return
 * identical hits.
 */
export function maxScoreSearch(
  cursors: TermCursor[],
  top: TopKLike,
  norms: Uint8Array,
  normTable: Float32Array,
  allow: Uint8Array | undefined,
  scratch: MaxScoreScratch,
): void {
  const m = cursors.length;
  if (m === 0) return;
  // ascending upper bound; prefix[i] = bound of order[0..i] together
  const order = cursors.slice().sort((a, b) => a.upperBound - b.upperBound);
  const prefix = new Float64Array(m);
  let sum = 0;
  for (let i = 0; i < m; i++) {
    sum += (order[i] as TermCursor).upperBound;
    prefix[i] = sum * SLACK;
  }
  for (const c of cursors) c.next();
  const { wacc, touched } = scratch;
  const contrib = scratch.ensureTerms(m);
  let theta = top.threshold();
  let e = 0; // order[0..e-1] are non-essential
  while (e < m && (prefix[e] as number) < theta) e++;

  while (e < m) {
    // the next window that holds an essential posting
    let first = END_DOC;
    for (let i = e; i < m; i++) {
      const d = (order[i] as TermCursor).cur;
      if (d < first) first = d;
    }
    if (first === END_DOC) break;
    const winStart = first - (first % WINDOW);
    const winEnd = winStart + WINDOW;

    // essential postings of the window, term at a time
    let nTouched = 0;
    for (let i = e; i < m; i++) {
      const c = order[i] as TermCursor;
      const w = c.weight;
      const j = c.j;
      while (c.cur < winEnd) {
        const doc = c.cur;
        if (allow === undefined || (((allow[doc >>> 3] as number) >>> (doc & 7)) & 1) === 1) {
          const tf = c.tf;
          const s = (w * tf) / (tf + (normTable[norms[doc] as number] as number));
          const slot = doc - winStart;
          if (wacc[slot] === 0) touched[nTouched++] = slot;
          wacc[slot] = (wacc[slot] as number) + s;
          contrib[slot * m + j] = s;
        }
        c.next();
      }
    }

    // candidates in doc order: prune on bounds, else probe and score
    const cand = touched.subarray(0, nTouched).sort();
    for (let t = 0; t < nTouched; t++) {
      const slot = cand[t] as number;
      const doc = winStart + slot;
      let partial = wacc[slot] as number;
      wacc[slot] = 0;
      const row = slot * m;
      let pruned = false;
      if (e > 0) {
        const k = normTable[norms[doc] as number] as number;
        for (let i = e - 1; i >= 0; i--) {
          if (partial * SLACK + (prefix[i] as number) < theta) {
            pruned = true;
            break;
          }
          const c = order[i] as TermCursor;
          c.advanceTo(doc);
          if (c.cur !== doc) continue;
          const s = (c.weight * c.tf) / (c.tf + k);
          contrib[row + c.j] = s;
          partial += s;
        }
      }
      if (!pruned) {
        // the exhaustive path's float32 accumulation, in query order
        let score = 0;
        for (let j = 0; j < m; j++) {
          const s = contrib[row + j] as number;
          if (s !== 0) score = Math.fround(score + s);
        }
        if (top.accepts(score, doc)) {
          top.push(score, doc);
          theta = top.threshold();
        }
      }
      contrib.fill(0, row, row + m);
    }
    while (e < m && (prefix[e] as number) < theta) e++;
  }
}

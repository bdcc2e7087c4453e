import { RetrieverError } from '../../errors.js';
import { TopK, type ScoredHit } from '../../core/top-k.js';
import { preadFully } from '../../util/pread.js';
import type { BlockMaxReader, ListBlocks } from './block-max.js';
import { quantize } from './scoring.js';

/**
 * Docs per scoring window. Small enough that a window's bound (the best
 * block of each list that overlaps it) is tight for the common terms, whose
 * blocks span a few hundred docs; large enough that the per-window work
 * (a bound per term and a sort of the terms) stays small beside scoring.
 */
const WINDOW = 4096;
/** Bytes a list cursor reads past the block it needs (lists are mostly read forward). */
const READ_AHEAD = 16 * 1024;

/** A query term the scorer walks: its list and its weight (query tf · idf). */
export interface ScoredTerm {
  offset: number;
  nbytes: number;
  df: number;
  weight: number;
}

/** What the scorer reads from: the index's files and norms, shared with the exhaustive scorer. */
export interface BlockMaxSource {
  fd: number;
  postingsPath: string;
  norms: Uint8Array;
  normTable: Float32Array;
  blocks: BlockMaxReader;
}

/** The doc of an exhausted cursor: past every chunk num. */
const END = 0x7fffffff;

/**
 * One term's place in its postings list, as an iterator over its postings:
 * `doc` and `tf` are the current posting's. Moving forward decodes the varint
 * stream one posting at a time; moving far ahead jumps over whole blocks with
 * the stored last docs and end bytes, so a long list probed for a few docs is
 * read and decoded only around them. A short list has no stored blocks and is
 * one block, its bound found by decoding it once.
 */
class ListCursor {
  weight = 0;
  offset = 0;
  nbytes = 0;
  readonly blocks: ListBlocks = {
    count: 0,
    lastDoc: new Uint32Array(64),
    endByte: new Uint32Array(64),
    bestTf: new Uint32Array(64),
    bestNorm: new Uint32Array(64),
  };
  /** Each block's bound: the quantized contribution of its best posting, plus one unit of slack. */
  bound = new Float64Array(64);
  /** The block of the current posting. */
  cb = 0;
  /** The current posting (doc END when the list is done). */
  doc = -1;
  tf = 0;
  /** Where the next posting starts, and where the current block ends, in `buf`. */
  private pos = 0;
  private blockEnd = 0;
  /** tf = 1 contributions by length byte. */
  readonly one = new Float64Array(256);
  private buf = Buffer.allocUnsafe(READ_AHEAD);
  /** The list byte that buf[0] holds, and how many are held. */
  private bufFrom = 0;
  private bufLen = 0;

  constructor(private readonly src: BlockMaxSource) {}

  /** Points the cursor at `term`'s list, on its first posting at or past `from`. */
  open(term: ScoredTerm, from: number): void {
    this.weight = term.weight;
    this.offset = term.offset;
    this.nbytes = term.nbytes;
    this.bufFrom = 0;
    this.bufLen = 0;
    const table = this.src.normTable;
    // the very expression the exhaustive scorer uses, so contributions match to the bit
    for (let nb = 0; nb < 256; nb++) this.one[nb] = quantize((term.weight * 1) / (1 + (table[nb] as number)));
    const b = this.blocks;
    if (this.src.blocks.read(term.offset, b)) {
      if (this.bound.length < b.count) this.bound = new Float64Array(b.lastDoc.length);
      for (let j = 0; j < b.count; j++)
        this.bound[j] = this.contribution(b.bestTf[j] as number, b.bestNorm[j] as number) + 1;
    } else {
      // a short list: one block, whose bound and last doc one pass finds
      b.count = 1;
      b.endByte[0] = term.nbytes;
      b.lastDoc[0] = END;
      this.enter(0);
      let best = 0;
      let last = 0;
      for (let d = this.next(); d !== END; d = this.next()) {
        const s = this.score();
        if (s > best) best = s;
        last = d;
      }
      b.lastDoc[0] = last;
      this.bound[0] = best;
    }
    this.doc = -1;
    this.enter(0);
    this.advance(from);
  }

  contribution(tf: number, norm: number): number {
    return tf === 1
      ? (this.one[norm] as number)
      : quantize((this.weight * tf) / (tf + (this.src.normTable[norm] as number)));
  }

  /** The current posting's contribution. */
  score(): number {
    const norm = this.src.norms[this.doc] as number;
    return this.tf === 1
      ? (this.one[norm] as number)
      : quantize((this.weight * this.tf) / (this.tf + (this.src.normTable[norm] as number)));
  }

  /** Moves to the first posting whose doc is at least `target`; returns its doc (END if none). */
  advance(target: number): number {
    if (this.doc >= target) return this.doc;
    const b = this.blocks;
    if (target > (b.lastDoc[this.cb] as number)) {
      let j = this.cb + 1;
      while (j < b.count && (b.lastDoc[j] as number) < target) j++;
      if (j >= b.count) return (this.doc = END);
      this.enter(j);
    }
    // the current block holds a doc ≥ target: its last
    let d = this.next();
    while (d < target) d = this.next();
    return d;
  }

  /** Moves to the next posting; returns its doc (END if none). */
  next(): number {
    if (this.pos >= this.blockEnd) {
      if (this.cb + 1 >= this.blocks.count) return (this.doc = END);
      this.enter(this.cb + 1);
    }
    const bytes = this.buf;
    let pos = this.pos;
    let b = bytes[pos++] as number;
    let v = b & 0x7f;
    let shift = 7;
    while (b & 0x80) {
      b = bytes[pos++] as number;
      v |= (b & 0x7f) << shift;
      shift += 7;
    }
    let tf = 1;
    if ((v & 1) === 0) {
      b = bytes[pos++] as number;
      tf = b & 0x7f;
      shift = 7;
      while (b & 0x80) {
        b = bytes[pos++] as number;
        tf |= (b & 0x7f) << shift;
        shift += 7;
      }
    }
    this.pos = pos;
    this.tf = tf;
    // the list's first gap counts from 0; before it the cursor stands at -1
    return (this.doc = (this.doc < 0 ? 0 : this.doc) + (v >>> 1));
  }

  /** Puts the cursor before block j's first posting, its bytes in the buffer. */
  private enter(j: number): void {
    const b = this.blocks;
    const start = j > 0 ? (b.endByte[j - 1] as number) : 0;
    const end = b.endByte[j] as number;
    if (start < this.bufFrom || end > this.bufFrom + this.bufLen) {
      const len = Math.max(end - start, Math.min(READ_AHEAD, this.nbytes - start));
      if (len > this.buf.length) this.buf = Buffer.allocUnsafe(len);
      if (preadFully(this.src.fd, this.buf, len, this.offset + start) < len) {
        throw new RetrieverError(
          'INDEX_CORRUPT',
          `${this.src.postingsPath} is shorter than its term dictionary says: rebuild the index`,
        );
      }
      this.bufFrom = start;
      this.bufLen = len;
    }
    this.cb = j;
    this.pos = start - this.bufFrom;
    this.blockEnd = end - this.bufFrom;
    this.doc = j > 0 ? (b.lastDoc[j - 1] as number) : -1;
  }
}

/**
 * Block-max MaxScore over windows of docs, after Lucene's MaxScoreBulkScorer.
 * For each window of WINDOW docs every term gets a bound: the best block of
 * its list that overlaps the window. A window whose bounds sum to no more than
 * the current k-th score is skipped without decoding anything. Otherwise the
 * terms with the smallest bounds, as many as together cannot beat the k-th
 * score, are non-essential: only the other (essential) lists are decoded
 * across the window, into an accumulator; each doc they reach then takes the
 * non-essential terms' contributions, largest bound first, only while its
 * score plus what is left could still beat the k-th.
 *
 * Exact: a doc is dropped only when an upper bound of its score is at most
 * the k-th score, and docs are visited in ascending order, so such a doc
 * could at best tie, and ties go to the smaller num, which is already held.
 * Scores are sums of quantized contributions (see `quantize`), so they equal
 * the exhaustive scorer's to the bit.
 */
export class BlockMaxScorer {
  private cursors: ListCursor[] = [];
  private readonly acc = new Float64Array(WINDOW);
  private readonly seen = new Int32Array(WINDOW >>> 5);

  constructor(private readonly src: BlockMaxSource) {}

  /** The k best docs in [from, to) (scores in quantized units), skipping docs `allow` excludes. */
  search(terms: readonly ScoredTerm[], k: number, from: number, to: number, allow?: Uint8Array): ScoredHit[] {
    const n = terms.length;
    while (this.cursors.length < n) this.cursors.push(new ListCursor(this.src));
    const cursors = this.cursors;
    terms.forEach((t, i) => (cursors[i] as ListCursor).open(t, from));
    const top = new TopK(k);
    let thr = -Infinity;
    const acc = this.acc;
    const seen = this.seen;
    const order = new Int32Array(n);
    const wmax = new Float64Array(n);
    /** prefix[j]: the sum of the j smallest window bounds (the non-essential ones' remainders). */
    const prefix = new Float64Array(n + 1);
    for (let ws = from; ws < to;) {
      const we = Math.min(to, ws + WINDOW);
      let total = 0;
      let nextDoc = to;
      for (let t = 0; t < n; t++) {
        const c = cursors[t] as ListCursor;
        const b = c.blocks;
        // the first block that can hold a doc ≥ ws (the cursor itself moves only when read)
        let cb = c.cb;
        while (cb < b.count && (b.lastDoc[cb] as number) < ws) cb++;
        let m = 0;
        for (let j = cb; j < b.count; j++) {
          if (j > cb && (b.lastDoc[j - 1] as number) + 1 >= we) break;
          const bj = c.bound[j] as number;
          if (bj > m) m = bj;
        }
        wmax[t] = m;
        total += m;
        // where this list can next have a doc (for skipping empty stretches)
        if (cb < b.count) {
          const first = Math.max(c.doc, cb > 0 ? (b.lastDoc[cb - 1] as number) + 1 : 0);
          if (first < nextDoc) nextDoc = first;
        }
      }
      if (nextDoc >= we) {
        // no list has a block overlapping this window: jump to where one starts
        ws = Math.max(we, Math.min(to, nextDoc));
        continue;
      }
      if (total <= thr) {
        ws = we;
        continue;
      }
      // terms by ascending window bound (insertion sort: queries have few terms)
      for (let t = 0; t < n; t++) {
        let j = t;
        while (j > 0 && (wmax[order[j - 1] as number] as number) > (wmax[t] as number)) {
          order[j] = order[j - 1] as number;
          j--;
        }
        order[j] = t;
      }
      let ne = 0;
      prefix[0] = 0;
      while (ne < n && (prefix[ne] as number) + (wmax[order[ne] as number] as number) <= thr) {
        prefix[ne + 1] = (prefix[ne] as number) + (wmax[order[ne] as number] as number);
        ne++;
      }
      for (let e = ne; e < n; e++) this.accumulate(cursors[order[e] as number] as ListCursor, ws, we, allow);
      const words = (we - ws + 31) >>> 5;
      for (let w = 0; w < words; w++) {
        let word = seen[w] as number;
        if (word === 0) continue;
        seen[w] = 0;
        while (word !== 0) {
          const low = word & -word;
          word ^= low;
          const local = (w << 5) + 31 - Math.clz32(low);
          let score = acc[local] as number;
          acc[local] = 0;
          const doc = ws + local;
          if (score + (prefix[ne] as number) <= thr) continue;
          let dropped = false;
          for (let j = ne - 1; j >= 0; j--) {
            const c = cursors[order[j] as number] as ListCursor;
            if (c.advance(doc) === doc) score += c.score();
            if (score + (prefix[j] as number) <= thr) {
              dropped = true;
              break;
            }
          }
          if (dropped || !top.accepts(score, doc)) continue;
          top.push(score, doc);
          thr = top.threshold();
        }
      }
      ws = we;
    }
    return top.result();
  }

  /** Adds an essential list's contributions in [ws, we) to the window's accumulator. */
  private accumulate(c: ListCursor, ws: number, we: number, allow: Uint8Array | undefined): void {
    const acc = this.acc;
    const seen = this.seen;
    for (let doc = c.advance(ws); doc < we; doc = c.next()) {
      if (allow !== undefined && (((allow[doc >>> 3] as number) >>> (doc & 7)) & 1) === 0) continue;
      const local = doc - ws;
      acc[local] = (acc[local] as number) + c.score();
      seen[local >>> 5] = (seen[local >>> 5] as number) | (1 << (local & 31));
    }
  }
}

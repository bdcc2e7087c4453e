import { closeSync, openSync, readFileSync } from 'node:fs';
import { RetrieverError } from '../../errors.js';
import { TopK, type ScoredHit } from '../../core/top-k.js';
import type { Analyzer } from '../../text/analyzer.js';
import type { ChunkFilter } from '../../core/contracts.js';
import { preadFully } from '../../util/pread.js';
import { BlockMaxReader } from './block-max.js';
import { BlockMaxScorer, type ScoredTerm } from './block-max-search.js';
import { averageLength, idf, lengthNormTable, quantize, SCORE_UNIT, type Bm25Params } from './scoring.js';

/** Select by a sequential accumulator pass when a query has more postings than 1/DIVISOR of all chunks. */
const DENSE_SELECT_DIVISOR = 8;
/** Lists at least this long have their range bounds remembered by a ranged searcher. */
const BOUNDS_MIN_BYTES = 4096;
/** Lists whose bounds a ranged searcher remembers before it starts over (≈ 100 bytes each). */
const BOUNDS_MAX_LISTS = 1 << 17;

export interface Bm25Stats {
  docCount: number;
  chunkCount: number;
  totalTokens: number;
}

/** A half-open range of chunk nums, [from, to). */
export interface NumRange {
  from: number;
  to: number;
}

export interface TermLookup {
  (term: string): { df: number; offset: number; nbytes: number } | undefined;
}

export interface Bm25SearcherOptions {
  postingsPath: string;
  normsPath: string;
  /**
   * The block-max file, when the index has one: searches then skip what
   * cannot reach the top k. Indexes built before it existed are scored
   * exhaustively, with the same results.
   */
  blocksPath?: string;
  lookupTerm: TermLookup;
  analyzer: Analyzer;
  stats: Bm25Stats;
  params: Bm25Params;
  /** Lists shorter than this are always decoded from their start (tests lower it). */
  boundsMinBytes?: number;
}

/**
 * Where one term's postings for a searcher's range begin and end, learnt on
 * the first ranged search that reads the list, so later ones read and decode
 * only their own part of it.
 */
interface ListBounds {
  /** Byte offset in the list of the first posting at or past the range's start. */
  start: number;
  /** The doc of the posting before it: the base its gap counts from. */
  docBefore: number;
  /** Byte offset of the first posting at or past the range's end (the list's length if none). */
  end: number;
}

/**
 * BM25 over the on-disk postings: block-max MaxScore (`BlockMaxScorer`) when
 * the index has a block-max file, else exhaustive term-at-a-time scoring.
 * Both return the same hits with the same scores. Only the norms (one byte
 * per chunk) and the scorers' buffers live in memory; postings are read with
 * pread, so the OS page cache, shared by every server process, holds the hot
 * lists.
 */
export class Bm25Searcher {
  private readonly fd: number;
  private readonly norms: Uint8Array;
  private readonly normTable: Float32Array;
  private acc: Float64Array | undefined;
  private readonly blockMax: BlockMaxScorer | undefined;
  private readonly blocks: BlockMaxReader | undefined;
  private touched = new Uint32Array(4096);
  private readBuf = Buffer.allocUnsafe(1 << 16);
  private readonly tfOne = new Float64Array(256);
  /** Bounds of long lists for `boundsRange`, by the list's offset in the postings file. */
  private readonly bounds = new Map<number, ListBounds>();
  private boundsRange: NumRange = { from: -1, to: -1 };

  constructor(private readonly opts: Bm25SearcherOptions) {
    this.norms = readFileSync(opts.normsPath);
    if (this.norms.length !== opts.stats.chunkCount) {
      throw new RetrieverError(
        'INDEX_CORRUPT',
        `${opts.normsPath} has ${this.norms.length} entries but the index has ${opts.stats.chunkCount} chunks: rebuild the index`,
      );
    }
    const avgdl = averageLength(opts.stats);
    this.normTable = lengthNormTable(opts.params, avgdl);
    this.fd = openSync(opts.postingsPath, 'r');
    if (opts.blocksPath) {
      try {
        this.blocks = new BlockMaxReader(opts.blocksPath, { params: opts.params, avgdl });
      } catch (err) {
        closeSync(this.fd);
        throw err;
      }
      this.blockMax = new BlockMaxScorer({
        fd: this.fd,
        postingsPath: opts.postingsPath,
        norms: this.norms,
        normTable: this.normTable,
        blocks: this.blocks,
      });
    }
  }

  /** Whether searches skip with the block-max file (false: exhaustive scoring). */
  get pruning(): boolean {
    return this.blockMax !== undefined;
  }

  /** Query terms with their counts, after the index's own analyzer. */
  analyzeQuery(query: string): Map<string, number> {
    const qtf = new Map<string, number>();
    for (const t of this.opts.analyzer.analyze(query)) qtf.set(t, (qtf.get(t) ?? 0) + 1);
    return qtf;
  }

  get chunkCount(): number {
    return this.opts.stats.chunkCount;
  }

  /**
   * The k best chunks for `query`. Chunks outside `filter`, when given, are
   * never scored: filters apply before top-k. With `range`, only chunks in
   * it are scored: every chunk's score is the same sum, in the same order, as
   * in a search of the whole index, so the k best of the k best of each part
   * of a partition (`mergeHits`) are exactly the whole search's k best.
   */
  search(query: string, k: number, filter?: ChunkFilter, range?: NumRange): ScoredHit[] {
    const n = this.opts.stats.chunkCount;
    const from = Math.max(0, range?.from ?? 0);
    const to = Math.min(n, range?.to ?? n);
    if (k <= 0 || from >= to) return [];
    const hits = this.blockMax
      ? this.blockMax.search(this.scoredTerms(query), k, from, to, filter?.bits)
      : this.exhaustive(query, k, from, to, filter?.bits);
    for (const h of hits) h.score /= SCORE_UNIT;
    return hits;
  }

  /** The query's terms found in the index, with their weights (query tf · idf). */
  private scoredTerms(query: string): ScoredTerm[] {
    const terms: ScoredTerm[] = [];
    for (const [term, count] of this.analyzeQuery(query)) {
      const entry = this.opts.lookupTerm(term);
      if (entry) terms.push({ ...entry, weight: count * idf(entry.df, this.opts.stats.docCount) });
    }
    return terms;
  }

  /**
   * Every posting of every query term scored (scores in quantized units). A
   * searcher asked for the same range again (a pool thread always is) reads
   * only that range's part of each long list. One function of ≈ 125 lines on
   * purpose: it is the hot loop of indexes without a block-max file, whose
   * state stays in locals.
   */
  private exhaustive(query: string, k: number, from: number, to: number, allow: Uint8Array | undefined): ScoredHit[] {
    const n = this.opts.stats.chunkCount;
    const acc = (this.acc ??= new Float64Array(n));
    const norms = this.norms;
    const table = this.normTable;
    const one = this.tfOne;
    const terms: Array<{ count: number; df: number; offset: number; nbytes: number }> = [];
    let postings = 0;
    for (const [term, count] of this.analyzeQuery(query)) {
      const entry = this.opts.lookupTerm(term);
      if (!entry) continue;
      terms.push({ count, ...entry });
      postings += entry.df;
    }
    // Long questions can score over half a corpus. Then the scored docs are
    // not tracked at all, and the top k come from one sequential pass over
    // the accumulator; otherwise from the list of docs scored.
    const scan = postings * DENSE_SELECT_DIVISOR > n;
    let touched = this.touched;
    let touchedCount = 0;
    const partial = from > 0 || to < n;
    if (partial && (this.boundsRange.from !== from || this.boundsRange.to !== to)) {
      this.bounds.clear();
      this.boundsRange = { from, to };
    }
    const boundsMin = this.opts.boundsMinBytes ?? BOUNDS_MIN_BYTES;
    for (const entry of terms) {
      const count = entry.count;
      const weight = count * idf(entry.df, this.opts.stats.docCount);
      // most postings have tf = 1: their score by length byte, computed once
      // per term (the very same expression, so scores do not change)
      for (let nb = 0; nb < 256; nb++) one[nb] = quantize((weight * 1) / (1 + (table[nb] as number)));
      // room for every posting of this list to be a new doc, so the loop
      // below appends without a bounds check
      if (!scan && touchedCount + entry.df > touched.length) touched = this.growTouched(touchedCount + entry.df);
      const learn = partial && entry.nbytes >= boundsMin;
      const known = learn ? this.bounds.get(entry.offset) : undefined;
      const bytes = known
        ? this.readPostings(entry.offset + known.start, known.end - known.start)
        : this.readPostings(entry.offset, entry.nbytes);
      let pos = 0;
      let doc = known ? known.docBefore : 0;
      const end = known ? known.end - known.start : entry.nbytes;
      // what this pass learns of the list's bounds, when it reads the whole list
      let skipped = 0;
      let docBefore = 0;
      let stop = end;
      while (pos < end) {
        // decodePostings' loop, inlined: this is the BM25 hot path
        const at = pos;
        let b = bytes[pos++] as number;
        let v = b & 0x7f;
        let shift = 7;
        while (b & 0x80) {
          b = bytes[pos++] as number;
          v |= (b & 0x7f) << shift;
          shift += 7;
        }
        doc += v >>> 1;
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
        // docs ascend within a list: before the range, skip; past it, the list is done
        if (doc < from) {
          skipped = pos;
          docBefore = doc;
          continue;
        }
        if (doc >= to) {
          stop = at;
          break;
        }
        if (allow !== undefined && (((allow[doc >>> 3] as number) >>> (doc & 7)) & 1) === 0) continue;
        const s =
          tf === 1
            ? (one[norms[doc] as number] as number)
            : quantize((weight * tf) / (tf + (table[norms[doc] as number] as number)));
        // branch-free "first time this doc is seen": always write the slot,
        // advance only for a new doc. Whether a doc is new is a coin flip the
        // CPU cannot predict; as a branch it cost half the query time.
        const old = acc[doc] as number;
        if (!scan) {
          touched[touchedCount] = doc;
          touchedCount += +(old === 0); // branch-free: count the doc once, on its first posting
        }
        acc[doc] = old + s;
      }
      if (learn && !known) this.remember(entry.offset, { start: skipped, docBefore, end: stop });
    }
    if (scan) {
      // docs come in ascending order, so one whose score equals the k-th
      // never displaces it (ties go to the smaller num)
      const top = new TopK(Math.min(k, to - from));
      let thr = 0;
      for (let doc = from; doc < to; doc++) {
        const s = acc[doc] as number;
        if (s > thr) {
          top.push(s, doc);
          const t = top.threshold();
          if (t > thr) thr = t;
        }
      }
      acc.fill(0, from, to);
      return top.result();
    }
    const top = new TopK(Math.min(k, touchedCount));
    for (let i = 0; i < touchedCount; i++) {
      const doc = touched[i] as number;
      const s = acc[doc] as number;
      if (top.accepts(s, doc)) top.push(s, doc);
      acc[doc] = 0;
    }
    return top.result();
  }

  close(): void {
    this.blocks?.close();
    closeSync(this.fd);
  }

  /** Long lists whose bounds this searcher knows for its current range. */
  get knownBounds(): number {
    return this.bounds.size;
  }

  private remember(offset: number, b: ListBounds): void {
    if (this.bounds.size >= BOUNDS_MAX_LISTS) this.bounds.clear();
    this.bounds.set(offset, b);
  }

  private readPostings(offset: number, nbytes: number): Buffer {
    if (nbytes > this.readBuf.length) this.readBuf = Buffer.allocUnsafe(Math.max(nbytes, this.readBuf.length * 2));
    if (preadFully(this.fd, this.readBuf, nbytes, offset) < nbytes) {
      throw new RetrieverError(
        'INDEX_CORRUPT',
        `${this.opts.postingsPath} is shorter than its term dictionary says: rebuild the index`,
      );
    }
    return this.readBuf;
  }

  private growTouched(min: number): Uint32Array<ArrayBuffer> {
    let size = this.touched.length * 2;
    while (size < min) size *= 2;
    const next = new Uint32Array(size);
    next.set(this.touched);
    this.touched = next;
    return next;
  }
}

/** The k best of several hit lists (each best first), ties to the smaller num, as `TopK` orders them. */
export function mergeHits(lists: readonly ScoredHit[][], k: number): ScoredHit[] {
  const total = lists.reduce((sum, list) => sum + list.length, 0);
  const top = new TopK(Math.max(0, Math.min(k, total)));
  for (const list of lists) for (const h of list) if (top.accepts(h.score, h.num)) top.push(h.score, h.num);
  return top.result();
}

import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TermEntry } from '../../store/chunk-store.js';
import type { Analyzer } from '../../text/analyzer.js';
import { ByteSink, encodePosting, readVarint } from './postings-codec.js';
import { FileWriter, RunReader, encodeRunRecord, type RunRecord } from './run-files.js';
import { encodeLength } from './scoring.js';

export interface Bm25BuildStats {
  /** Chunks with at least one indexed token (BM25's N). */
  docCount: number;
  /** All chunks, including empty ones (the norms file length). */
  chunkCount: number;
  totalTokens: number;
  terms: number;
  postings: number;
  postingsBytes: number;
  runs: number;
}

export interface Bm25BuilderOptions {
  /** Postings held in memory before a sorted run is spilled to disk (12 bytes each). */
  maxPostingsInMemory: number;
  /** Directory for spilled runs (inside the build's temp dir). */
  tempDir: string;
}

/**
 * Single-pass in-memory inversion (SPIMI) with bounded memory: postings go
 * into flat typed arrays; when they fill up, they are sorted by term and
 * spilled as a run; finish() merges the runs into one postings file. Memory
 * is O(maxPostingsInMemory + vocabulary of one run), not O(corpus).
 */
export class Bm25Builder {
  private termIds = new Map<string, number>();
  private terms: string[] = [];
  private pTerm: Uint32Array;
  private pDoc: Uint32Array;
  private pTf: Uint32Array;
  private n = 0;
  private scratch = new Int32Array(1024);
  private readonly touched: number[] = [];
  private norms = new Uint8Array(1024);
  private nextNum = 0;
  private docCount = 0;
  private totalTokens = 0;
  private totalPostings = 0;
  private readonly runPaths: string[] = [];
  private termCount = 0;

  constructor(
    private readonly analyzer: Analyzer,
    private readonly opts: Bm25BuilderOptions,
  ) {
    const cap = opts.maxPostingsInMemory;
    this.pTerm = new Uint32Array(cap);
    this.pDoc = new Uint32Array(cap);
    this.pTf = new Uint32Array(cap);
  }

  /** Indexes chunk `num`; chunks must arrive in order 0, 1, 2, … Returns its token count. */
  add(num: number, text: string): number {
    if (num !== this.nextNum) throw new Error(`BM25 builder expected chunk ${this.nextNum}, got ${num}`);
    this.nextNum++;
    const tokens = this.analyzer.analyze(text);
    // spill before mapping terms: a spill resets the run-local term ids
    if (this.n > 0 && this.n + tokens.length > this.pTerm.length) this.spillRun();
    if (tokens.length > this.pTerm.length) this.growPostings(tokens.length);
    for (const t of tokens) {
      let id = this.termIds.get(t);
      if (id === undefined) {
        id = this.terms.length;
        this.termIds.set(t, id);
        this.terms.push(t);
        if (id >= this.scratch.length) this.growScratch();
      }
      if (this.scratch[id] === 0) this.touched.push(id);
      (this.scratch[id] as number)++;
    }
    for (const id of this.touched) {
      this.pTerm[this.n] = id;
      this.pDoc[this.n] = num;
      this.pTf[this.n] = this.scratch[id] as number;
      this.n++;
      this.scratch[id] = 0;
    }
    this.totalPostings += this.touched.length;
    this.touched.length = 0;
    if (num >= this.norms.length) {
      const next = new Uint8Array(this.norms.length * 2);
      next.set(this.norms);
      this.norms = next;
    }
    this.norms[num] = encodeLength(tokens.length);
    if (tokens.length > 0) this.docCount++;
    this.totalTokens += tokens.length;
    return tokens.length;
  }

  /**
   * Writes `postingsPath` and `normsPath` and hands the term dictionary, in
   * ascending term order, to `writeTerms`.
   */
  finish(postingsPath: string, normsPath: string, writeTerms: (entries: Iterable<TermEntry>) => void): Bm25BuildStats {
    writeFileSync(normsPath, this.norms.subarray(0, this.nextNum));
    const out = new FileWriter(postingsPath);
    try {
      if (this.runPaths.length === 0) writeTerms(this.writeFinalFromMemory(out));
      else {
        this.spillRun();
        writeTerms(this.mergeRuns(out));
      }
    } finally {
      out.close();
      for (const p of this.runPaths) rmSync(p, { force: true });
    }
    return {
      docCount: this.docCount,
      chunkCount: this.nextNum,
      totalTokens: this.totalTokens,
      terms: this.termCount,
      postings: this.totalPostings,
      postingsBytes: out.offset,
      runs: this.runPaths.length,
    };
  }

  private growPostings(cap: number): void {
    const grow = (a: Uint32Array): Uint32Array => {
      const next = new Uint32Array(cap);
      next.set(a.subarray(0, this.n));
      return next;
    };
    this.pTerm = grow(this.pTerm);
    this.pDoc = grow(this.pDoc);
    this.pTf = grow(this.pTf);
  }

  private growScratch(): void {
    const next = new Int32Array(this.scratch.length * 2);
    next.set(this.scratch);
    this.scratch = next;
  }

  /** Term ids of the in-memory postings sorted by term, with each term's posting indexes. */
  private *sortedLists(): Generator<{ term: string; idx: Uint32Array }> {
    const T = this.terms.length;
    const counts = new Uint32Array(T + 1);
    for (let i = 0; i < this.n; i++) (counts[(this.pTerm[i] as number) + 1] as number)++;
    for (let t = 0; t < T; t++) (counts[t + 1] as number) += counts[t] as number;
    const order = new Uint32Array(this.n);
    const fill = counts.slice(0, T);
    // stable scatter keeps each term's postings in ascending doc order
    for (let i = 0; i < this.n; i++) {
      const t = this.pTerm[i] as number;
      order[(fill[t] as number)++] = i;
    }
    const ids = Array.from({ length: T }, (_, i) => i);
    const terms = this.terms;
    ids.sort((a, b) => compareTerms(terms[a] as string, terms[b] as string));
    for (const id of ids) {
      const from = counts[id] as number;
      const to = counts[id + 1] as number;
      if (to > from) yield { term: terms[id] as string, idx: order.subarray(from, to) };
    }
  }

  private encodeList(idx: Uint32Array, sink: ByteSink): number {
    sink.reset();
    let prev = 0;
    let last = 0;
    for (const i of idx) {
      const doc = this.pDoc[i] as number;
      encodePosting(sink, doc - prev, this.pTf[i] as number);
      prev = doc;
      last = doc;
    }
    return last;
  }

  private *writeFinalFromMemory(out: FileWriter): Generator<TermEntry> {
    const sink = new ByteSink();
    for (const { term, idx } of this.sortedLists()) {
      this.encodeList(idx, sink);
      const offset = out.offset;
      out.write(sink.view());
      this.termCount++;
      yield { term, df: idx.length, offset, nbytes: sink.length };
    }
  }

  private spillRun(): void {
    if (this.n === 0) return;
    const path = join(this.opts.tempDir, `bm25-run-${String(this.runPaths.length).padStart(4, '0')}.bin`);
    const out = new FileWriter(path);
    const sink = new ByteSink();
    for (const { term, idx } of this.sortedLists()) {
      const lastDoc = this.encodeList(idx, sink);
      out.write(encodeRunRecord({ term, df: idx.length, lastDoc, postings: sink.view() }));
    }
    out.close();
    this.runPaths.push(path);
    // run-local vocabulary: memory stays bounded by one run, not the corpus
    this.n = 0;
    this.termIds = new Map();
    this.terms = [];
    this.scratch = new Int32Array(1024);
  }

  private *mergeRuns(out: FileWriter): Generator<TermEntry> {
    const readers = this.runPaths.map((p) => new RunReader(p));
    try {
      const heads: Array<RunRecord | null> = readers.map((r) => r.next());
      const sink = new ByteSink();
      for (;;) {
        let min: string | undefined;
        for (const h of heads) if (h && (min === undefined || compareTerms(h.term, min) < 0)) min = h.term;
        if (min === undefined) break;
        sink.reset();
        let df = 0;
        let prevLast = -1;
        // runs hold disjoint, increasing doc ranges: concatenating in run order keeps docs sorted
        for (let r = 0; r < heads.length; r++) {
          const h = heads[r];
          if (!h || h.term !== min) continue;
          appendRebased(sink, h.postings, prevLast < 0 ? 0 : prevLast);
          prevLast = h.lastDoc;
          df += h.df;
          heads[r] = (readers[r] as RunReader).next();
        }
        const offset = out.offset;
        out.write(sink.view());
        this.termCount++;
        yield { term: min, df, offset, nbytes: sink.length };
      }
    } finally {
      for (const r of readers) r.close();
    }
  }
}

/** Appends a list whose first gap is absolute, re-expressing that gap relative to `prevDoc`. */
function appendRebased(sink: ByteSink, postings: Uint8Array, prevDoc: number): void {
  const first = readVarint(postings, 0);
  const firstDoc = Math.floor(first.value / 2);
  const tfIsOne = first.value & 1;
  sink.varint((firstDoc - prevDoc) * 2 + tfIsOne);
  sink.bytes(postings.subarray(first.next));
}

/** Code-unit order; any fixed total order works as long as runs and merge agree. */
function compareTerms(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

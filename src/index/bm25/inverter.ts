import { join } from 'node:path';
import type { Analyzer } from '../../text/analyzer.js';
import { ByteSink, encodePosting } from './postings-codec.js';
import { FileWriter, SAMPLE_EVERY, writeRunRecord, type RunFile } from './run-files.js';
import { TermCounter } from './term-counter.js';
import { compareKeyed, prefixKey, sortTermIds } from './term-sort.js';

export interface PostingList {
  term: string;
  docs: Uint32Array;
  tfs: Uint32Array;
}

/** Terms an inverter remembers across runs before it starts a fresh vocabulary at a spill. */
export const DEFAULT_VOCABULARY_CAP = 1 << 20;

/** Word forms the term counter's table holds before it is cleared (between batches). */
export const DEFAULT_WORD_TABLE_ENTRIES = 1 << 20;

/**
 * Single-pass in-memory inversion (SPIMI) for one thread: postings go into
 * flat arrays; when they fill up they are sorted by term and spilled as a run
 * file. Memory is O(maxPostings + vocabularyCap), not O(corpus). Chunk numbers
 * must increase but need not be consecutive (a worker sees every other
 * batch).
 *
 * The per-word work (finding each word's term, counting terms per chunk,
 * appending postings) runs in WebAssembly (`TermCounter`); the postings arrays
 * live in its memory. This class numbers the terms and writes the runs.
 *
 * The vocabulary (term ids, and the term order of the last spill) is kept
 * from one run to the next until it passes `vocabularyCap` terms: forgetting
 * it at every spill made each run look every word up again by string.
 */
export class Inverter {
  /** Ids of terms[0, sortedCount) in term order, as of the last spill. */
  private sorted = new Int32Array(0);
  private sortedCount = 0;
  /** prefixKey of each term id below sortedCount (see term-sort.ts). */
  private termKeys = new Float64Array(0);
  private readonly counter: TermCounter;
  private readonly one = new Uint32Array(1);
  /** grouped()'s arrays, kept across spills. */
  private readonly group = {
    starts: new Uint32Array(0),
    fill: new Uint32Array(0),
    docs: new Uint32Array(0),
    tfs: new Uint32Array(0),
  };
  private lastNum = -1;
  readonly runs: RunFile[] = [];
  private spilledPostings = 0;

  constructor(
    analyzer: Analyzer,
    maxPostings: number,
    private readonly tempDir: string,
    private readonly runPrefix: string,
    private readonly vocabularyCap = DEFAULT_VOCABULARY_CAP,
    wordTableEntries = DEFAULT_WORD_TABLE_ENTRIES,
  ) {
    this.counter = new TermCounter(analyzer, maxPostings, wordTableEntries);
  }

  /** Inverts chunk `num`; returns its number of indexed tokens (its BM25 length). */
  add(num: number, text: string): number {
    this.addBatch(num, [text], this.one);
    return this.one[0] as number;
  }

  /** Inverts `texts` as chunks first, first + 1, …; writes each one's number of indexed tokens to `tokens`. */
  addBatch(first: number, texts: readonly string[], tokens: Uint32Array): void {
    if (texts.length === 0) return;
    if (first <= this.lastNum) throw new Error(`BM25 inverter got chunk ${first} after ${this.lastNum}`);
    this.lastNum = first + texts.length - 1;
    this.counter.countBatch(first, texts, tokens, () => this.spill());
  }

  /** Postings inverted so far: those spilled to runs and those still held. */
  get postings(): number {
    return this.spilledPostings + this.counter.held;
  }

  /** The terms by id (numbered by the counter's term table). */
  private get terms(): string[] {
    return this.counter.terms;
  }

  /**
   * The in-memory postings grouped by term (a stable counting sort, so docs
   * stay ascending) in contiguous arrays, yielded in term order. The lists are
   * views, valid until the next spill.
   */
  *lists(): Generator<PostingList> {
    const { starts, docs, tfs } = this.grouped();
    const order = this.termOrder();
    const terms = this.terms;
    for (let k = 0; k < order.length; k++) {
      const id = order[k] as number;
      const from = starts[id] as number;
      const to = starts[id + 1] as number;
      if (to > from) yield { term: terms[id] as string, docs: docs.subarray(from, to), tfs: tfs.subarray(from, to) };
    }
  }

  /**
   * The postings by term id: term t's are docs/tfs[starts[t], starts[t + 1]), docs ascending.
   * The arrays are reused from one spill to the next (fresh ones faulted in 70+ MB of new pages
   * at every spill of a full budget), so views of them are valid until the next call.
   */
  private grouped(): { starts: Uint32Array; docs: Uint32Array; tfs: Uint32Array } {
    const T = this.terms.length;
    const held = this.counter.postings();
    const n = held.terms.length;
    const pTerm = held.terms;
    const g = this.group;
    if (g.starts.length < T + 1) {
      g.starts = new Uint32Array(Math.max(T + 1, 2 * g.starts.length));
      g.fill = new Uint32Array(g.starts.length);
    }
    if (g.docs.length < n) {
      g.docs = new Uint32Array(Math.max(n, 2 * g.docs.length));
      g.tfs = new Uint32Array(g.docs.length);
    }
    const starts = g.starts.subarray(0, T + 1);
    starts.fill(0);
    for (let i = 0; i < n; i++) (starts[(pTerm[i] as number) + 1] as number)++;
    for (let t = 0; t < T; t++) (starts[t + 1] as number) += starts[t] as number;
    const docs = g.docs.subarray(0, n);
    const tfs = g.tfs.subarray(0, n);
    const fill = g.fill;
    fill.set(starts.subarray(0, T));
    for (let i = 0; i < n; i++) {
      const pos = (fill[pTerm[i] as number] as number)++;
      docs[pos] = held.docs[i] as number;
      tfs[pos] = held.tfs[i] as number;
    }
    return { starts, docs, tfs };
  }

  /** Every term id in term order: the terms new since the last spill are sorted and merged into its order. */
  private termOrder(): Int32Array {
    const T = this.terms.length;
    if (this.sortedCount === T) return this.sorted;
    const terms = this.terms;
    const keys = this.prefixKeys();
    const fresh = sortTermIds(
      Int32Array.from({ length: T - this.sortedCount }, (_, i) => this.sortedCount + i),
      terms,
      keys,
    );
    const old = this.sorted;
    const merged = new Int32Array(T);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < this.sortedCount && j < fresh.length) {
      const a = old[i] as number;
      const b = fresh[j] as number;
      if (compareKeyed(a, b, terms, keys) <= 0) {
        merged[k++] = a;
        i++;
      } else {
        merged[k++] = b;
        j++;
      }
    }
    while (i < this.sortedCount) merged[k++] = old[i++] as number;
    while (j < fresh.length) merged[k++] = fresh[j++] as number;
    this.sorted = merged;
    this.sortedCount = T;
    return merged;
  }

  /** termKeys, extended to every term id. */
  private prefixKeys(): Float64Array {
    const T = this.terms.length;
    if (this.termKeys.length < T) {
      const grown = new Float64Array(Math.max(T, 2 * this.termKeys.length));
      grown.set(this.termKeys);
      this.termKeys = grown;
    }
    for (let id = this.sortedCount; id < T; id++) this.termKeys[id] = prefixKey(this.terms[id] as string);
    return this.termKeys;
  }

  /** Writes the in-memory postings as a sorted run file and starts a new run. */
  spill(): void {
    if (this.counter.held === 0) return;
    const path = join(this.tempDir, `${this.runPrefix}-${String(this.runs.length).padStart(5, '0')}.run`);
    const out = new FileWriter(path);
    const samples: RunFile['samples'] = [];
    const { starts, docs, tfs } = this.grouped();
    const order = this.termOrder();
    const terms = this.terms;
    let records = 0;
    for (let k = 0; k < order.length; k++) {
      const id = order[k] as number;
      const from = starts[id] as number;
      const to = starts[id + 1] as number;
      if (to === from) continue;
      if (records++ % SAMPLE_EVERY === 0) samples.push([terms[id] as string, out.offset]);
      writeRunRecord(out, terms[id] as string, docs, tfs, from, to);
    }
    out.close();
    this.runs.push({ path, bytes: out.offset, samples });
    this.spilledPostings += this.counter.held;
    this.counter.clearPostings();
    // a vocabulary past its cap starts over: memory stays bounded, not O(corpus)
    if (this.terms.length > this.vocabularyCap) {
      this.sorted = new Int32Array(0);
      this.sortedCount = 0;
      this.termKeys = new Float64Array(0);
      this.counter.resetIds();
    }
  }

  get inMemory(): number {
    return this.counter.held;
  }
}

/** Encodes one list (first gap absolute); returns its last doc. */
export function encodeList(docs: Uint32Array, tfs: Uint32Array, sink: ByteSink): number {
  sink.reset();
  let prev = 0;
  for (let i = 0; i < docs.length; i++) {
    const doc = docs[i] as number;
    encodePosting(sink, doc - prev, tfs[i] as number);
    prev = doc;
  }
  return prev;
}

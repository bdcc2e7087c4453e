import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import type { Analyzer } from '../../text/analyzer.js';
import { writeAll, type RunFile } from './run-files.js';
import { DEFAULT_RUN_BUFFER_BYTES, TermCounter } from './term-counter.js';

/** Terms an inverter remembers across runs before it starts a fresh vocabulary at a spill. */
export const DEFAULT_VOCABULARY_CAP = 1 << 20;

/** Word forms the term counter's table holds before it is cleared (between batches). */
export const DEFAULT_WORD_TABLE_ENTRIES = 1 << 20;

/**
 * Single-pass in-memory inversion (SPIMI) for one thread: each term's
 * postings are appended to its own list as they come; when `maxPostings` are
 * held the lists are written in term order as a run file. Memory is
 * O(maxPostings + vocabularyCap), not O(corpus). Chunk numbers must increase
 * but need not be consecutive (a worker sees every other batch).
 *
 * The per-word work (finding each word's term, counting terms per chunk,
 * appending postings, ordering the terms, writing the records) runs in
 * WebAssembly (`TermCounter`); the lists live in its memory, encoded as a run
 * stores them. This class names the runs and bounds the vocabulary.
 *
 * The vocabulary (term ids, and their order as of the last spill) is kept
 * from one run to the next until it passes `vocabularyCap` terms: forgetting
 * it at every spill made each run look every word up again by string.
 */
export class Inverter {
  private readonly counter: TermCounter;
  private readonly one = new Uint32Array(1);
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
    runBufferBytes = DEFAULT_RUN_BUFFER_BYTES,
  ) {
    this.counter = new TermCounter(analyzer, maxPostings, wordTableEntries, runBufferBytes);
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

  /** Writes the in-memory postings as a sorted run file and starts a new run. */
  spill(): void {
    if (this.counter.held === 0) return;
    const path = join(this.tempDir, `${this.runPrefix}-${String(this.runs.length).padStart(5, '0')}.run`);
    const terms = this.terms;
    const fd = openSync(path, 'w');
    let run: { bytes: number; samples: Array<[number, number]> };
    try {
      run = this.counter.writeRun((bytes) => writeAll(fd, bytes));
    } finally {
      closeSync(fd);
    }
    this.runs.push({
      path,
      bytes: run.bytes,
      samples: run.samples.map(([id, offset]) => [terms[id] as string, offset]),
    });
    this.spilledPostings += this.counter.held;
    this.counter.clearPostings();
    // a vocabulary past its cap starts over: memory stays bounded, not O(corpus)
    if (this.terms.length > this.vocabularyCap) this.counter.resetIds();
  }

  get inMemory(): number {
    return this.counter.held;
  }
}

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RetrieverError } from '../../errors.js';
import type { Analyzer } from '../../text/analyzer.js';
import { ownString } from '../../text/own-string.js';
import { builtFileUrl } from '../../util/built-file.js';

/** The WebAssembly API this file uses (lib ES2023 and @types/node 20 do not declare it). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => { exports: unknown };
}
type WasmModule = { readonly wasmModule: unique symbol };
// lib ES2023 declares no WebAssembly (it is in the DOM lib): the part of it used here, typed
const wasm: WasmApi = Reflect.get(globalThis, 'WebAssembly');

/** The exports of dist/wasm/term-counter.wasm (source: src/index/bm25/wasm/term-counter.ts). */
interface CounterExports {
  memory: { readonly buffer: ArrayBuffer };
  init(maxPostings: number, tableEntries: number, outBytes: number): void;
  reserve(units: number, words: number, chunks: number): void;
  growSpans(words: number): void;
  spansCapacity(): number;
  textPtr(): number;
  spansPtr(): number;
  docsPtr(): number;
  postings(): number;
  beginRun(): number;
  writeRecords(from: number, to: number): number;
  outPtr(): number;
  outLength(): number;
  samplesPtr(): number;
  samplesLength(): number;
  clearPostings(): void;
  clearIfFull(): number;
  resetIds(): void;
  termScratch(len: number): number;
  termOf(len: number): number;
  count(from: number, to: number, first: number): number;
}

/**
 * Postings one counter holds at most: at most 10 bytes each, plus their lists' slice headers (the
 * 1M generated index averages 1.5 bytes a posting), inside the 4 GB a WebAssembly module can address, with room left for its tables and
 * a batch's text. A larger budget is clamped (the inverter spills more often; its output does not
 * change).
 */
export const MAX_COUNTER_POSTINGS = 160_000_000;

/** The longest term a run record holds: its UTF-8 length is a u16, and a UTF-16 unit takes up to 3 bytes. */
export const MAX_TERM_UNITS = Math.floor(0xffff / 3);

/** Bytes of run records `writeRun` hands over at a time (a record larger than this gets a buffer of its own size). */
export const DEFAULT_RUN_BUFFER_BYTES = 1 << 22;

/** Code units of text one batch may carry into the module (2 GB as UTF-16). */
const MAX_BATCH_UNITS = 2 ** 30;

let compiled: WasmModule | undefined;

/** Where `npm run build` puts the module, from this file in dist/ or (under vitest) in src/. */
export function termCounterWasmPath(): string {
  return fileURLToPath(builtFileUrl('../../../wasm/term-counter.wasm', import.meta.url));
}

function counterModule(): WasmModule {
  if (compiled) return compiled;
  const path = termCounterWasmPath();
  if (!existsSync(path)) {
    throw new RetrieverError(
      'INTERNAL',
      `the BM25 term counter ${path} is missing: this install was not built; run \`npm run build\` in the package directory`,
    );
  }
  compiled = new wasm.Module(readFileSync(path));
  return compiled;
}

/**
 * The BM25 inverter's per-word bookkeeping in WebAssembly (see
 * src/index/bm25/wasm/term-counter.ts): the analyzer's scanner finds the words of a batch
 * of chunks here, in TypeScript, and the module maps each word's code units to
 * a term id through its own hash table, counts terms per chunk and appends
 * each posting to its term's postings, encoded as a run record holds them, in
 * its memory; `writeRun` writes them out as run records. A word form seen for the
 * first time is normalised by the analyzer (`Analyzer.normalize`, the query
 * path's function), so index and query analysis stay one implementation, and
 * its term numbered by the module's term table (`terms[id]` is the term).
 */
export class TermCounter {
  private readonly ex: CounterExports;
  /** The terms by id, since the last `resetIds`. */
  terms: string[] = [];
  private buffer: ArrayBuffer | undefined;
  private u8!: Buffer;
  private u16!: Uint16Array;
  private i32!: Int32Array;
  private u32!: Uint32Array;
  /** Terms by table entry number (null: a stopword), kept so ids can be reassigned without normalising again. */
  private entryTerms: Array<string | null> = [];
  private texts: readonly string[] = [];
  private spans = 0; // int32 index of the next span triple
  private spanBase = 0;
  private spanEnd = 0; // int32 index past the room reserved for spans

  constructor(
    private readonly analyzer: Analyzer,
    maxPostings: number,
    tableEntries: number,
    runBufferBytes = DEFAULT_RUN_BUFFER_BYTES,
  ) {
    const instance = new wasm.Instance(counterModule(), {
      env: {
        resolve: (entry: number, doc: number, start: number, len: number): number =>
          this.resolve(entry, doc, start, len),
        abort: (): never => {
          throw outOfMemory();
        },
      },
    });
    this.ex = instance.exports as CounterExports;
    guarded(() => this.ex.init(Math.min(maxPostings, MAX_COUNTER_POSTINGS), tableEntries, runBufferBytes));
  }

  /** Postings held since the last `clearPostings`. */
  get held(): number {
    return this.ex.postings();
  }

  /**
   * Counts `texts` as chunks first, first + 1, …, writing each chunk's number
   * of indexed tokens to `tokens`. When the postings budget fills mid-batch it
   * calls `spill` (which reads `postings()` and then calls `clearPostings`) and
   * goes on.
   */
  countBatch(first: number, texts: readonly string[], tokens: Uint32Array, spill: () => void): void {
    const n = texts.length;
    if (this.ex.clearIfFull()) this.entryTerms = [];
    let units = 0;
    for (const t of texts) units += t.length;
    // the batch's text is copied into the module as UTF-16: past 1G code units it cannot fit
    if (units > MAX_BATCH_UNITS) throw outOfMemory();
    // room for an estimate of the words (real text has one per 6-7 code units); the scan grows it
    guarded(() => this.ex.reserve(units, (units >> 2) + 1024, n));
    this.refresh();
    const textBytes = this.ex.textPtr();
    const docs = this.ex.docsPtr() >> 2;
    this.spanBase = this.ex.spansPtr() >> 2;
    this.spanEnd = this.spanBase + 3 * this.ex.spansCapacity();
    this.spans = this.spanBase;
    let at = 0;
    for (let d = 0; d < n; d++) {
      const text = texts[d] as string;
      this.u8.write(text, textBytes + 2 * at, 'utf16le');
      this.u32[docs + 3 * d] = at;
      this.analyzer.scanWords(text, this.emit);
      this.u32[docs + 3 * d + 1] = (this.spans - this.spanBase) / 3;
      at += text.length;
    }
    this.texts = texts;
    let d = 0;
    while ((d = guarded(() => this.ex.count(d, n, first))) < n) spill();
    this.texts = [];
    this.refresh();
    const out = this.ex.docsPtr() >> 2;
    for (let i = 0; i < n; i++) tokens[i] = this.u32[out + 3 * i + 2] as number;
  }

  /**
   * Writes the postings held as run records (see run-files.ts), one per term
   * with postings, in term order (`compareTerms`: the module keeps every
   * term id in that order and sorts only the terms new since the last run
   * into it), handing the bytes to `write` a few MB at a time (a view of the
   * module's memory, valid during the call). Returns the run's size and every
   * SAMPLE_EVERY-th record's term id and offset. Call `clearPostings` after.
   */
  writeRun(write: (bytes: Uint8Array) => void): { bytes: number; samples: Array<[number, number]> } {
    const total = guarded(() => this.ex.beginRun());
    this.refresh();
    const samples: Array<[number, number]> = [];
    let bytes = 0;
    let i = 0;
    while (i < total) {
      const from = i;
      i = guarded(() => this.ex.writeRecords(from, total));
      this.refresh();
      const sp = this.ex.samplesPtr() >> 2;
      const n = this.ex.samplesLength();
      for (let k = 0; k < n; k++)
        samples.push([this.u32[sp + 2 * k] as number, bytes + (this.u32[sp + 2 * k + 1] as number)]);
      const len = this.ex.outLength();
      const ptr = this.ex.outPtr();
      if (len > 0) write(this.u8.subarray(ptr, ptr + len));
      bytes += len;
    }
    return { bytes, samples };
  }

  clearPostings(): void {
    this.ex.clearPostings();
  }

  /** Forgets every term, term id and the term order (a new vocabulary); word forms stay cached and are renumbered on sight. */
  resetIds(): void {
    this.ex.resetIds();
    this.terms = [];
  }

  private readonly emit = (start: number, end: number, hash: number): void => {
    if (this.spans === this.spanEnd) this.growSpans();
    const s = this.spans;
    this.i32[s] = start;
    this.i32[s + 1] = end - start;
    this.i32[s + 2] = hash;
    this.spans = s + 3;
  };

  /** Doubles the room for spans; the module may move them and its memory may grow, so indices and views are renewed. */
  private growSpans(): void {
    const written = this.spans - this.spanBase;
    guarded(() => this.ex.growSpans(2 * this.ex.spansCapacity()));
    this.refresh();
    this.spanBase = this.ex.spansPtr() >> 2;
    this.spanEnd = this.spanBase + 3 * this.ex.spansCapacity();
    this.spans = this.spanBase + written;
  }

  private resolve(entry: number, doc: number, start: number, len: number): number {
    let term: string | null;
    if (entry === this.entryTerms.length) {
      const raw = this.analyzer.normalize((this.texts[doc] as string).slice(start, start + len));
      // kept for the whole build: it must not keep its batch's text alive
      term = raw === null ? null : ownString(raw);
      this.entryTerms.push(term);
    } else {
      term = this.entryTerms[entry] as string | null;
    }
    if (term === null) return -1;
    if (term.length > MAX_TERM_UNITS) {
      throw new RetrieverError(
        'INTERNAL',
        `analyzer ${this.analyzer.id} normalised a word to a term of ${term.length} UTF-16 units; ` +
          `a run record holds at most ${MAX_TERM_UNITS} (its length is 16-bit, in UTF-8 bytes): the analyzer must cap its terms`,
      );
    }
    return this.termId(term);
  }

  /** The term's id from the module's term table; a term it had not seen is added to `terms`. */
  private termId(term: string): number {
    const n = term.length;
    const at = guarded(() => this.ex.termScratch(n)) >> 1;
    this.refresh();
    const u16 = this.u16;
    for (let i = 0; i < n; i++) u16[at + i] = term.charCodeAt(i);
    const id = this.ex.termOf(n);
    if (id === this.terms.length) this.terms.push(term);
    return id;
  }

  /** Views of the module's memory, renewed when it grew (growth replaces the buffer). */
  private refresh(): void {
    const buffer = this.ex.memory.buffer;
    if (buffer === this.buffer) return;
    this.buffer = buffer;
    this.u8 = Buffer.from(buffer);
    this.u16 = new Uint16Array(buffer);
    this.i32 = new Int32Array(buffer);
    this.u32 = new Uint32Array(buffer);
  }
}

/** What a failed allocation inside the module means, and what to do about it. */
function outOfMemory(): RetrieverError {
  return new RetrieverError(
    'BUILD',
    'the BM25 term counter ran out of memory (a WebAssembly module addresses at most 4 GB per inversion thread): ' +
      'lower --max-postings-in-memory, or split input records of hundreds of MB into smaller documents',
  );
}

/** Runs a call into the module, turning its traps (its size checks end in one) into that error. */
export function guarded<T>(call: () => T): T {
  try {
    return call();
  } catch (err) {
    if (err instanceof RetrieverError || !(err instanceof Error) || err.constructor.name !== 'RuntimeError') throw err;
    throw outOfMemory();
  }
}

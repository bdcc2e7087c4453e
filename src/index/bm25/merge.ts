import type { TermEntry } from '../../store/chunk-store.js';
import { ByteSink, encodePosting, readPosting, readVarint, type PostingRead } from './postings-codec.js';
import { compareTerms } from './term-sort.js';
import { FileWriter, RunReader, type RunFile, type RunRecord } from './run-files.js';

/** A half-open range of terms, [lo, hi); an absent bound is open. */
export interface TermRange {
  lo?: string;
  hi?: string;
}

/**
 * Merges sorted run files into the final postings file, yielding the term
 * dictionary in term order. A term's lists from different runs are
 * concatenated when their doc ranges are ordered (one thread's successive
 * runs) and merged posting by posting when they interleave (several workers
 * took alternate batches). The output does not depend on how the input was
 * partitioned. With `range`, only the terms in it: merging consecutive ranges
 * into consecutive files gives the bytes of one whole merge.
 */
export function* mergeRuns(runs: readonly RunFile[], out: FileWriter, range: TermRange = {}): Generator<TermEntry> {
  const readers = runs.map((r) => new RangeReader(r, range));
  try {
    const heads: Array<RunRecord | null> = readers.map((r) => r.next());
    const heap = new TermHeap(heads);
    const sink = new ByteSink();
    const lists: RunRecord[] = [];
    for (;;) {
      const term = heap.peekTerm();
      if (term === undefined) break;
      lists.length = 0;
      while (heap.peekTerm() === term) {
        const r = heap.pop();
        lists.push(heads[r] as RunRecord);
        heads[r] = (readers[r] as RangeReader).next();
        heap.push(r);
      }
      const df = writeMerged(lists, sink);
      const offset = out.offset;
      out.write(sink.view());
      yield { term, df, offset, nbytes: sink.length };
    }
  } finally {
    for (const r of readers) r.close();
  }
}

/**
 * Up to `parts - 1` increasing terms that cut the runs' term space into parts
 * of about as many bytes of run records each (for merging them in parallel):
 * each sample stands for the bytes up to the next sample of its run.
 */
export function splitTerms(runs: readonly RunFile[], parts: number): string[] {
  const weighted: Array<{ term: string; bytes: number }> = [];
  let total = 0;
  for (const run of runs) {
    run.samples.forEach(([term, offset], i) => {
      const bytes = (run.samples[i + 1]?.[1] ?? run.bytes) - offset;
      weighted.push({ term, bytes });
      total += bytes;
    });
  }
  weighted.sort((a, b) => compareTerms(a.term, b.term));
  const bounds: string[] = [];
  let seen = 0;
  for (const w of weighted) {
    // a bound starts a part at this sample once the parts before it hold their share
    if (bounds.length < parts - 1 && seen >= (total * (bounds.length + 1)) / parts && seen > 0) {
      const last = bounds[bounds.length - 1];
      if (last === undefined || compareTerms(w.term, last) > 0) bounds.push(w.term);
    }
    seen += w.bytes;
  }
  return bounds;
}

/** A run's records in a term range: starts at the last sample before `lo`, skips up to it, ends at `hi`. */
class RangeReader {
  private readonly reader: RunReader;

  constructor(
    run: RunFile,
    private readonly range: TermRange,
  ) {
    let from = 0;
    const lo = range.lo;
    if (lo !== undefined) {
      for (const [term, offset] of run.samples) {
        if (compareTerms(term, lo) >= 0) break;
        from = offset;
      }
    }
    this.reader = new RunReader(run.path, from);
  }

  next(): RunRecord | null {
    const { lo, hi } = this.range;
    for (;;) {
      const rec = this.reader.next();
      if (rec === null) return null;
      if (lo !== undefined && compareTerms(rec.term, lo) < 0) continue;
      if (hi !== undefined && compareTerms(rec.term, hi) >= 0) return null;
      return rec;
    }
  }

  close(): void {
    this.reader.close();
  }
}

function firstDoc(rec: RunRecord): number {
  return Math.floor(readVarint(rec.postings, 0).value / 2);
}

/**
 * Encodes the union of `lists` (disjoint doc sets) into `sink`; returns df.
 *
 * Lists are first laid end to end into chains of ascending, non-overlapping
 * doc ranges (one worker's successive runs form one chain), so at most as
 * many streams as there were workers remain to interleave. Within a stretch
 * of one list that no other stream interrupts, the postings' bytes are copied
 * as they are; only the first gap of each stretch is re-encoded.
 */
function writeMerged(lists: RunRecord[], sink: ByteSink): number {
  sink.reset();
  if (lists.length === 1) {
    // most terms are rare and sit in one run: its bytes are already the list (the first gap is absolute)
    const only = lists[0] as RunRecord;
    sink.bytes(only.postings);
    return only.df;
  }
  const firsts = lists.map(firstDoc);
  const order = lists.map((_, i) => i).sort((a, b) => (firsts[a] as number) - (firsts[b] as number));
  const chains: number[][] = [];
  const chainLast: number[] = [];
  for (const i of order) {
    const first = firsts[i] as number;
    let c = 0;
    while (c < chains.length && (chainLast[c] as number) >= first) c++;
    if (c === chains.length) {
      chains.push([]);
      chainLast.push(0);
    }
    (chains[c] as number[]).push(i);
    chainLast[c] = (lists[i] as RunRecord).lastDoc;
  }
  let df = 0;
  for (const rec of lists) df += rec.df;
  if (chains.length === 1) {
    let prevLast = 0;
    for (const i of chains[0] as number[]) {
      const rec = lists[i] as RunRecord;
      const first = readVarint(rec.postings, 0);
      sink.varint(((firsts[i] as number) - prevLast) * 2 + (first.value & 1));
      sink.bytes(rec.postings.subarray(first.next));
      prevLast = rec.lastDoc;
    }
    return df;
  }
  const cursors = chains.map((chain) => new ChainCursor(chain.map((i) => (lists[i] as RunRecord).postings)));
  let prev = 0;
  for (;;) {
    // the stream with the smallest head, and the smallest head of the others
    let best = -1;
    let bestDoc = Infinity;
    let otherDoc = Infinity;
    for (let i = 0; i < cursors.length; i++) {
      const c = cursors[i] as ChainCursor;
      if (c.done) continue;
      if (c.doc < bestDoc) {
        otherDoc = bestDoc;
        bestDoc = c.doc;
        best = i;
      } else if (c.doc < otherDoc) otherDoc = c.doc;
    }
    if (best < 0) break;
    const c = cursors[best] as ChainCursor;
    encodePosting(sink, c.doc - prev, c.tf);
    prev = c.doc;
    // the postings after it in the same list go out byte for byte while they
    // still come before every other stream's head
    const bytes = c.bytes;
    const from = c.next;
    let until = from;
    while (c.step() && c.doc < otherDoc) {
      prev = c.doc;
      until = c.next;
    }
    if (until > from) sink.bytes(bytes.subarray(from, until));
  }
  return df;
}

/**
 * Walks a chain of posting lists (each encoded from doc 0) as one ascending
 * stream. `doc`/`tf` are the current posting, `next` the byte offset after it
 * in `bytes` (the current list).
 */
class ChainCursor {
  bytes: Uint8Array;
  doc = 0;
  tf = 0;
  next = 0;
  done = false;
  private list = 0;
  private readonly read: PostingRead = { gap: 0, tf: 0, next: 0 };

  constructor(private readonly lists: Uint8Array[]) {
    this.bytes = lists[0] as Uint8Array;
    this.decode();
  }

  /**
   * Moves to the next posting. True when it is in the same list; false when
   * the chain entered its next list (whose first gap is absolute) or ended.
   */
  step(): boolean {
    if (this.next < this.bytes.length) {
      this.decode();
      return true;
    }
    this.list++;
    if (this.list >= this.lists.length) {
      this.done = true;
      return false;
    }
    this.bytes = this.lists[this.list] as Uint8Array;
    this.next = 0;
    this.doc = 0;
    this.decode();
    return false;
  }

  private decode(): void {
    readPosting(this.bytes, this.next, this.read);
    this.doc += this.read.gap;
    this.tf = this.read.tf;
    this.next = this.read.next;
  }
}

/** Min-heap of run indexes keyed by their head record's term. */
class TermHeap {
  private readonly items: number[] = [];

  constructor(private readonly heads: ReadonlyArray<RunRecord | null>) {
    heads.forEach((_, i) => this.push(i));
  }

  peekTerm(): string | undefined {
    const top = this.items[0];
    return top === undefined ? undefined : (this.heads[top] as RunRecord).term;
  }

  pop(): number {
    const top = this.items[0] as number;
    const last = this.items.pop() as number;
    if (this.items.length > 0) {
      this.items[0] = last;
      this.down(0);
    }
    return top;
  }

  push(run: number): void {
    if (this.heads[run] === null) return;
    this.items.push(run);
    this.up(this.items.length - 1);
  }

  private less(a: number, b: number): boolean {
    const c = compareTerms((this.heads[a] as RunRecord).term, (this.heads[b] as RunRecord).term);
    return c < 0 || (c === 0 && a < b);
  }

  private up(i: number): void {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(this.items[i] as number, this.items[p] as number)) break;
      [this.items[i], this.items[p]] = [this.items[p] as number, this.items[i] as number];
      i = p;
    }
  }

  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.items.length && this.less(this.items[l] as number, this.items[m] as number)) m = l;
      if (r < this.items.length && this.less(this.items[r] as number, this.items[m] as number)) m = r;
      if (m === i) break;
      [this.items[i], this.items[m]] = [this.items[m] as number, this.items[i] as number];
      i = m;
    }
  }
}

import type { TermEntry } from '../../store/chunk-store.js';
import { ByteSink, encodePosting, readPosting, type PostingRead } from './postings-codec.js';
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

/**
 * Encodes the union of `lists` (disjoint doc sets) into `sink`; returns df.
 *
 * Lists are first laid end to end into chains of ascending, non-overlapping
 * doc ranges (one worker's successive runs form one chain), so at most as
 * many streams as there were workers remain to interleave. Within a stretch
 * of one list that no other stream interrupts, the postings' bytes are copied
 * as they are; only the first gap of each stretch is re-encoded. The chains
 * and cursors are reused from term to term (most terms of a large merge sit in
 * several runs) and short stretches are copied without a subarray view, which
 * made the merge much faster (figures, and the removed experiment that made them, in
 * docs/lab-notes/2026-11-build-throughput.md).
 */
function writeMerged(lists: RunRecord[], sink: ByteSink): number {
  sink.reset();
  if (lists.length === 1) {
    // most terms are rare and sit in one run: its bytes are already the list (the first gap is absolute)
    const only = lists[0] as RunRecord;
    sink.bytes(only.postings);
    return only.df;
  }
  // a list joins the first chain it can extend; lists arrive in run order, each worker's
  // runs in ascending doc ranges, so each worker's lists form one chain (any order gives
  // valid chains; the bytes written do not depend on how the lists were chained)
  let df = 0;
  let chains = 0;
  for (const rec of lists) {
    df += rec.df;
    const first = firstDoc(rec.postings);
    let c = 0;
    while (c < chains && (CHAIN_LAST[c] as number) >= first) c++;
    if (c === chains) {
      if (c === CHAINS.length) CHAINS.push([]);
      (CHAINS[c] as RunRecord[]).length = 0;
      chains++;
    }
    (CHAINS[c] as RunRecord[]).push(rec);
    CHAIN_LAST[c] = rec.lastDoc;
  }
  if (chains === 1) {
    let prevLast = 0;
    for (const rec of CHAINS[0] as RunRecord[]) {
      const postings = rec.postings;
      readPosting(postings, 0, READ);
      encodePosting(sink, READ.gap - prevLast, READ.tf);
      sink.range(postings, READ.next, postings.length);
      prevLast = rec.lastDoc;
    }
    return df;
  }
  while (CURSORS.length < chains) CURSORS.push(new ChainCursor());
  for (let c = 0; c < chains; c++) (CURSORS[c] as ChainCursor).reset(CHAINS[c] as RunRecord[]);
  let prev = 0;
  for (;;) {
    // the stream with the smallest head, and the smallest head of the others
    let best = -1;
    let bestDoc = Infinity;
    let otherDoc = Infinity;
    for (let i = 0; i < chains; i++) {
      const c = CURSORS[i] as ChainCursor;
      if (c.done) continue;
      if (c.doc < bestDoc) {
        otherDoc = bestDoc;
        bestDoc = c.doc;
        best = i;
      } else if (c.doc < otherDoc) otherDoc = c.doc;
    }
    if (best < 0) break;
    const c = CURSORS[best] as ChainCursor;
    encodePosting(sink, c.doc - prev, c.tf);
    // the postings after it in the same list go out byte for byte while they
    // still come before every other stream's head
    const bytes = c.bytes;
    const from = c.next;
    const until = c.skipBelow(otherDoc);
    prev = c.copiedDoc;
    if (until > from) sink.range(bytes, from, until);
  }
  return df;
}

/**
 * Walks a chain of posting lists (each encoded from doc 0) as one ascending
 * stream. `doc`/`tf` are the current posting, `next` the byte offset after it
 * in `bytes` (the current list).
 */
class ChainCursor {
  doc = 0;
  tf = 0;
  next = 0;
  done = false;
  /** After skipBelow: the doc of the last posting it passed over (the current one's, if none). */
  copiedDoc = 0;
  private list = 0;
  private lists: readonly RunRecord[] = [];
  bytes: Uint8Array = EMPTY;

  /** Starts over at the first posting of `lists` (a chain: ascending, non-overlapping). */
  reset(lists: readonly RunRecord[]): void {
    this.lists = lists;
    this.list = 0;
    this.done = false;
    this.bytes = (lists[0] as RunRecord).postings;
    this.decodeAt(0, 0);
  }

  /**
   * Passes over the postings after the current one, in the current list, whose
   * docs are below `limit`, and returns the byte offset where they end (they
   * are `bytes[next, returned)`, to be copied as they are). The first posting
   * at or past `limit` becomes the current one; when the list ends first, the
   * chain's next list's first posting does (its gap is absolute), or the
   * cursor is done. (Decoding the gaps inline here instead of through
   * readPosting measured no faster: docs/lab-notes/2026-11-build-throughput.md “Fewer id indexes”.)
   */
  skipBelow(limit: number): number {
    const b = this.bytes;
    const end = b.length;
    let doc = this.doc;
    let p = this.next;
    while (p < end) {
      readPosting(b, p, READ);
      const d = doc + READ.gap;
      if (d >= limit) {
        this.copiedDoc = doc;
        this.doc = d;
        this.tf = READ.tf;
        this.next = READ.next;
        return p;
      }
      doc = d;
      p = READ.next;
    }
    this.copiedDoc = doc;
    this.list++;
    if (this.list >= this.lists.length) {
      this.done = true;
      return end;
    }
    this.bytes = (this.lists[this.list] as RunRecord).postings;
    this.decodeAt(0, 0);
    return end;
  }

  /** Makes the posting at byte `pos` (gap from `base`) the current one. */
  private decodeAt(pos: number, base: number): void {
    readPosting(this.bytes, pos, READ);
    this.doc = base + READ.gap;
    this.tf = READ.tf;
    this.next = READ.next;
  }
}

const READ: PostingRead = { gap: 0, tf: 0, next: 0 };
const EMPTY = new Uint8Array(0);
/** writeMerged's chains (lists of records) and their last docs, and the cursors over them, reused. */
const CHAINS: RunRecord[][] = [];
const CHAIN_LAST: number[] = [];
const CURSORS: ChainCursor[] = [];

/** The doc of a list's first posting (its gap is absolute). */
function firstDoc(postings: Uint8Array): number {
  readPosting(postings, 0, READ);
  return READ.gap;
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

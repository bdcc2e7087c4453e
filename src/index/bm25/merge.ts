import type { TermEntry } from '../../store/chunk-store.js';
import { ByteSink, decodePostings, encodePosting, readVarint } from './postings-codec.js';
import { compareTerms } from './inverter.js';
import { FileWriter, RunReader, type RunRecord } from './run-files.js';

/**
 * Merges sorted run files into the final postings file, yielding the term
 * dictionary in term order. A term's lists from different runs are
 * concatenated when their doc ranges are ordered (one thread's successive
 * runs) and merged posting by posting when they interleave (several workers
 * took alternate batches). The output does not depend on how the input was
 * partitioned.
 */
export function* mergeRuns(paths: readonly string[], out: FileWriter): Generator<TermEntry> {
  const readers = paths.map((p) => new RunReader(p));
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
        heads[r] = (readers[r] as RunReader).next();
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

function firstDoc(rec: RunRecord): number {
  return Math.floor(readVarint(rec.postings, 0).value / 2);
}

/** Encodes the union of `lists` (disjoint doc sets) into `sink`; returns df. */
function writeMerged(lists: RunRecord[], sink: ByteSink): number {
  sink.reset();
  let df = 0;
  const firsts = lists.map(firstDoc);
  const order = lists.map((_, i) => i).sort((a, b) => (firsts[a] as number) - (firsts[b] as number));
  let ordered = true;
  for (let i = 1; i < order.length; i++) {
    if ((lists[order[i - 1] as number] as RunRecord).lastDoc >= (firsts[order[i] as number] as number)) ordered = false;
  }
  if (ordered) {
    let prevLast = 0;
    for (const i of order) {
      const rec = lists[i] as RunRecord;
      const first = readVarint(rec.postings, 0);
      sink.varint(((firsts[i] as number) - prevLast) * 2 + (first.value & 1));
      sink.bytes(rec.postings.subarray(first.next));
      prevLast = rec.lastDoc;
      df += rec.df;
    }
    return df;
  }
  // interleaved: decode each list, then a k-way merge by doc
  const cursors = lists.map((rec) => decodeList(rec.postings, rec.df));
  let prev = 0;
  for (;;) {
    let best = -1;
    let bestDoc = Infinity;
    for (let i = 0; i < cursors.length; i++) {
      const c = cursors[i] as Cursor;
      if (c.pos < c.docs.length && (c.docs[c.pos] as number) < bestDoc) {
        bestDoc = c.docs[c.pos] as number;
        best = i;
      }
    }
    if (best < 0) break;
    const c = cursors[best] as Cursor;
    encodePosting(sink, bestDoc - prev, c.tfs[c.pos] as number);
    prev = bestDoc;
    c.pos++;
    df++;
  }
  return df;
}

interface Cursor {
  docs: Uint32Array;
  tfs: Uint32Array;
  pos: number;
}

function decodeList(bytes: Uint8Array, df: number): Cursor {
  return { ...decodePostings(bytes, df), pos: 0 };
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

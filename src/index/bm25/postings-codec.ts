/**
 * Posting lists are (doc, tf) pairs in ascending doc order, stored as one
 * LEB128 varint per posting: (doc gap · 2 + [tf == 1]), followed by a second
 * varint holding tf when tf > 1. Most postings have tf = 1, so they cost a
 * single byte or two. The first gap is relative to 0.
 */
export class ByteSink {
  buf: Uint8Array;
  length = 0;

  constructor(initial = 1024) {
    this.buf = new Uint8Array(initial);
  }

  ensure(extra: number): void {
    if (this.length + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  varint(v: number): void {
    this.ensure(5);
    let x = v >>> 0;
    while (x >= 0x80) {
      this.buf[this.length++] = (x & 0x7f) | 0x80;
      x >>>= 7;
    }
    this.buf[this.length++] = x;
  }

  bytes(src: Uint8Array): void {
    this.ensure(src.length);
    this.buf.set(src, this.length);
    this.length += src.length;
  }

  /**
   * Appends src[from, to). Short ranges are copied byte by byte: a merge
   * copies millions of stretches of a few bytes, and a subarray view for each
   * cost more than the copy.
   */
  range(src: Uint8Array, from: number, to: number): void {
    const n = to - from;
    this.ensure(n);
    if (n > 32) {
      this.buf.set(src.subarray(from, to), this.length);
      this.length += n;
      return;
    }
    const buf = this.buf;
    let at = this.length;
    for (let i = from; i < to; i++) buf[at++] = src[i] as number;
    this.length = at;
  }

  reset(): void {
    this.length = 0;
  }

  view(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

export function encodePosting(sink: ByteSink, gap: number, tf: number): void {
  if (tf === 1) sink.varint(gap * 2 + 1);
  else {
    sink.varint(gap * 2);
    sink.varint(tf);
  }
}

/** Where readPosting puts what it decoded. */
export interface PostingRead {
  /** Doc gap from the previous posting (the first posting's gap is its doc). */
  gap: number;
  tf: number;
  /** Byte position after the posting. */
  next: number;
}

/**
 * Decodes the posting at `pos` into `out`. The one decoder the build and
 * tools share; the searcher inlines the same loop in its hot path.
 */
export function readPosting(bytes: Uint8Array, pos: number, out: PostingRead): void {
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
  out.gap = v >>> 1;
  out.tf = tf;
  out.next = pos;
}

/**
 * Decodes a whole list into typed arrays (tests, tools). `df`, when known,
 * sizes the arrays; otherwise they grow.
 */
export function decodePostings(bytes: Uint8Array, df?: number): { docs: Uint32Array; tfs: Uint32Array } {
  let docs: Uint32Array<ArrayBuffer> = new Uint32Array(df ?? 16);
  let tfs: Uint32Array<ArrayBuffer> = new Uint32Array(df ?? 16);
  let n = 0;
  let doc = 0;
  const p: PostingRead = { gap: 0, tf: 0, next: 0 };
  while (p.next < bytes.length) {
    readPosting(bytes, p.next, p);
    doc += p.gap;
    if (n === docs.length) {
      docs = grow(docs);
      tfs = grow(tfs);
    }
    docs[n] = doc;
    tfs[n] = p.tf;
    n++;
  }
  return { docs: docs.subarray(0, n), tfs: tfs.subarray(0, n) };
}

function grow(a: Uint32Array): Uint32Array<ArrayBuffer> {
  const next = new Uint32Array(a.length * 2);
  next.set(a);
  return next;
}

export function readVarint(bytes: Uint8Array, pos: number): { value: number; next: number } {
  let value = 0;
  // a multiplier, not 2 ** shift: the power was a Math.pow call per byte in the merge's profile
  let scale = 1;
  let b: number;
  do {
    b = bytes[pos++] as number;
    value += (b & 0x7f) * scale;
    scale *= 128;
  } while (b & 0x80);
  return { value, next: pos };
}

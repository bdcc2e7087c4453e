import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { ByteSink, encodePosting } from './postings-codec.js';

/**
 * Sequential binary files for the BM25 build: a buffered writer, and the
 * sorted "run" files a build spills when its in-memory postings are full.
 * Run record: u16 term bytes | term (UTF-8) | u32 df | u32 lastDoc | u32 nbytes | postings.
 */
export class FileWriter {
  private readonly fd: number;
  private readonly sink = new ByteSink(1 << 22);
  private written = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w');
  }

  /** Bytes written so far, buffered ones included. */
  get offset(): number {
    return this.written + this.sink.length;
  }

  write(bytes: Uint8Array): void {
    if (this.sink.length + bytes.length > this.sink.buf.length) this.flush();
    if (bytes.length > this.sink.buf.length) {
      this.written += writeAll(this.fd, bytes);
      return;
    }
    this.sink.bytes(bytes);
  }

  /**
   * The buffer itself, for a caller to append up to `bytes` bytes to in place
   * (flushed first if they would not fit; grown if they never could).
   */
  reserve(bytes: number): ByteSink {
    if (this.sink.length + bytes > this.sink.buf.length) this.flush();
    this.sink.ensure(bytes);
    return this.sink;
  }

  flush(): void {
    if (this.sink.length > 0) this.written += writeAll(this.fd, this.sink.view());
    this.sink.reset();
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

function writeAll(fd: number, bytes: Uint8Array): number {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
  return bytes.length;
}

/** A spilled run: its path and size, and every SAMPLE_EVERY-th record's term and byte offset (for range merges). */
export interface RunFile {
  path: string;
  bytes: number;
  samples: Array<[term: string, offset: number]>;
}

export const SAMPLE_EVERY = 1024;

export interface RunRecord {
  term: string;
  df: number;
  lastDoc: number;
  postings: Uint8Array;
}

const utf8 = new TextEncoder();

/**
 * Appends the run record of `term` with the postings docs[from, to) and
 * tfs[from, to) (docs ascending), encoded in place in `out`'s buffer: a spill
 * writes hundreds of thousands of records, and building each in buffers of
 * its own (term bytes, postings, the record) and copying them was most of a
 * spill's time.
 */
export function writeRunRecord(
  out: FileWriter,
  term: string,
  docs: Uint32Array,
  tfs: Uint32Array,
  from: number,
  to: number,
): void {
  // at most 3 UTF-8 bytes per UTF-16 unit, 5 + 5 bytes per posting
  const sink = out.reserve(2 + 3 * term.length + 12 + 10 * (to - from));
  const start = sink.length;
  const p = start + 2;
  let termBytes = term.length;
  for (let i = 0; i < term.length; i++) {
    const c = term.charCodeAt(i);
    if (c >= 0x80) {
      termBytes = utf8.encodeInto(term, sink.buf.subarray(p)).written;
      break;
    }
    sink.buf[p + i] = c;
  }
  putU16(sink.buf, start, termBytes);
  const head = p + termBytes;
  sink.length = head + 12;
  let prev = 0;
  for (let i = from; i < to; i++) {
    const doc = docs[i] as number;
    encodePosting(sink, doc - prev, tfs[i] as number);
    prev = doc;
  }
  putU32(sink.buf, head, to - from);
  putU32(sink.buf, head + 4, prev);
  putU32(sink.buf, head + 8, sink.length - head - 12);
}

function putU16(buf: Uint8Array, at: number, v: number): void {
  buf[at] = v & 0xff;
  buf[at + 1] = v >>> 8;
}

function putU32(buf: Uint8Array, at: number, v: number): void {
  buf[at] = v & 0xff;
  buf[at + 1] = (v >>> 8) & 0xff;
  buf[at + 2] = (v >>> 16) & 0xff;
  buf[at + 3] = v >>> 24;
}

/** Reads run records back in file order with a large read buffer, from `fromOffset` (a record's start). */
export class RunReader {
  private readonly fd: number;
  private buf = Buffer.allocUnsafe(1 << 22);
  /** `buf`'s memory as a plain Uint8Array */
  private bytes = plain(this.buf);
  private start = 0;
  private end = 0;
  private eof = false;

  constructor(
    readonly path: string,
    private fileOffset = 0,
  ) {
    this.fd = openSync(path, 'r');
  }

  next(): RunRecord | null {
    if (!this.fill(2)) return null;
    const termLen = this.buf.readUInt16LE(this.start);
    if (!this.fill(2 + termLen + 12)) throw new Error(`truncated run file ${this.path}`);
    let p = this.start + 2;
    const term = this.buf.toString('utf8', p, p + termLen);
    p += termLen;
    const df = this.buf.readUInt32LE(p);
    const lastDoc = this.buf.readUInt32LE(p + 4);
    const nbytes = this.buf.readUInt32LE(p + 8);
    const headLen = 2 + termLen + 12;
    if (!this.fill(headLen + nbytes)) throw new Error(`truncated run file ${this.path}`);
    const start = this.start + headLen;
    // a plain Uint8Array copy: a Buffer's slice (and every subarray of it the merge takes) goes
    // through Buffer's constructor, a fifth of the merge's time in a profile
    const postings = this.bytes.slice(start, start + nbytes);
    this.start = start + nbytes;
    return { term, df, lastDoc, postings };
  }

  close(): void {
    closeSync(this.fd);
  }

  /** Makes at least n unread bytes available; false at a clean end of file. */
  private fill(n: number): boolean {
    if (this.end - this.start >= n) return true;
    if (this.eof && this.start === this.end) return false;
    if (n > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(n, this.buf.length * 2));
      this.buf.copy(bigger, 0, this.start, this.end);
      this.buf = bigger;
      this.bytes = plain(bigger);
    } else {
      this.buf.copy(this.buf, 0, this.start, this.end);
    }
    this.end -= this.start;
    this.start = 0;
    while (!this.eof && this.end < n) {
      const got = readSync(this.fd, this.buf, this.end, this.buf.length - this.end, this.fileOffset);
      if (got === 0) this.eof = true;
      this.end += got;
      this.fileOffset += got;
    }
    return this.end - this.start >= n;
  }
}

function plain(buf: Buffer): Uint8Array {
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
}

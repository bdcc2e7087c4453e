import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { ByteSink } from './postings-codec.js';

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

/** Writes all of `bytes` at the file's position; returns their number. */
export function writeAll(fd: number, bytes: Uint8Array): number {
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

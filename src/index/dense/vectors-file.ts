import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { RetrieverError } from '../../errors.js';
import { floatsToHalves, halfTable, halvesToFloats } from '../../util/half.js';
import { preadFully, pwriteFullyAsync } from '../../util/pread.js';

/**
 * Raw row-major vectors, one row per chunk num, no header (dtype, dim and
 * count live in the manifest). f32 keeps exact cosines; f16 halves the disk
 * for very large corpora at ~1e-3 score precision.
 */
export type VectorDtype = 'f32' | 'f16';

export function rowBytes(dim: number, dtype: VectorDtype): number {
  return dim * (dtype === 'f32' ? 4 : 2);
}

/** Appends rows; `resume` keeps whole rows already on disk and drops a torn tail. */
export class VectorWriter {
  private readonly fd: number;
  private rows: number;

  constructor(
    readonly path: string,
    readonly dim: number,
    readonly dtype: VectorDtype,
    resume: boolean,
  ) {
    this.fd = openSync(path, resume ? 'a+' : 'w');
    const rb = rowBytes(dim, dtype);
    const size = fstatSync(this.fd).size;
    this.rows = Math.floor(size / rb);
    if (size !== this.rows * rb) ftruncateSync(this.fd, this.rows * rb);
  }

  get count(): number {
    return this.rows;
  }

  /** Keeps only the first `rows` rows (resume granularity). */
  truncate(rows: number): void {
    ftruncateSync(this.fd, rows * rowBytes(this.dim, this.dtype));
    this.rows = rows;
  }

  append(vectors: readonly Float32Array[]): void {
    const buf = encodeRows(vectors, this.dim, this.dtype);
    let off = 0;
    while (off < buf.length)
      off += writeSync(this.fd, buf, off, buf.length - off, this.rows * rowBytes(this.dim, this.dtype) + off);
    this.rows += vectors.length;
  }

  /**
   * `append` with the disk write on libuv's thread pool: the rows are encoded
   * now, and `count` moves on when the write has landed. Await each call
   * before the next (rows go at the end of what is written).
   */
  async appendAsync(vectors: readonly Float32Array[]): Promise<void> {
    const buf = encodeRows(vectors, this.dim, this.dtype);
    await pwriteFullyAsync(this.fd, buf, this.rows * rowBytes(this.dim, this.dtype));
    this.rows += vectors.length;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * Rows written where they belong (row num × row bytes), in any order: a build's batches are
 * planned by length, not by num, and each is kept the moment it is done. `resume` keeps what is
 * there; `finish` sets the file to exactly `count` rows.
 */
export class VectorRows {
  private readonly fd: number;
  private readonly rb: number;

  constructor(
    readonly path: string,
    readonly dim: number,
    readonly dtype: VectorDtype,
    resume: boolean,
  ) {
    this.fd = openSync(path, resume && existsSync(path) ? 'r+' : 'w+');
    this.rb = rowBytes(dim, dtype);
  }

  /** Whole rows the file holds from its start (what a build before per-batch writes kept). */
  get rowsOnDisk(): number {
    return Math.floor(fstatSync(this.fd).size / this.rb);
  }

  write(nums: ArrayLike<number>, vectors: readonly Float32Array[]): void {
    const buf = encodeRows(vectors, this.dim, this.dtype);
    for (let i = 0; i < vectors.length; i++) {
      const row = buf.subarray(i * this.rb, (i + 1) * this.rb);
      let off = 0;
      while (off < this.rb) off += writeSync(this.fd, row, off, this.rb - off, (nums[i] as number) * this.rb + off);
    }
  }

  finish(count: number): void {
    ftruncateSync(this.fd, count * this.rb);
  }

  close(): void {
    closeSync(this.fd);
  }
}

function encodeRows(vectors: readonly Float32Array[], dim: number, dtype: VectorDtype): Uint8Array {
  if (dtype === 'f32') {
    const out = new Float32Array(vectors.length * dim);
    vectors.forEach((v, i) => out.set(v, i * dim));
    return new Uint8Array(out.buffer);
  }
  const out = new Uint16Array(vectors.length * dim);
  vectors.forEach((v, i) =>
    floatsToHalves(v.length === dim ? v : v.subarray(0, dim), out.subarray(i * dim, (i + 1) * dim)),
  );
  return new Uint8Array(out.buffer);
}

/** Random access to rows by chunk num, with pread. */
export class VectorReader {
  private readonly fd: number;
  private readonly rb: number;
  private buf: Buffer;
  private readonly rowBuf: Uint8Array;
  private readonly rowF32: Float32Array | undefined;
  private readonly rowF16: Uint16Array | undefined;

  constructor(
    readonly path: string,
    readonly dim: number,
    readonly dtype: VectorDtype,
    readonly count: number,
  ) {
    this.fd = openSync(path, 'r');
    this.rb = rowBytes(dim, dtype);
    const size = fstatSync(this.fd).size;
    if (size !== count * this.rb) {
      closeSync(this.fd);
      throw new RetrieverError(
        'INDEX_CORRUPT',
        `${path} is ${size} bytes, expected ${count} × ${this.rb}: rebuild the index`,
      );
    }
    this.buf = Buffer.allocUnsafe(this.rb * 64);
    // one row, in its own aligned buffer, with typed views over it
    this.rowBuf = new Uint8Array(new ArrayBuffer(this.rb));
    if (dtype === 'f32') this.rowF32 = new Float32Array(this.rowBuf.buffer);
    else this.rowF16 = new Uint16Array(this.rowBuf.buffer);
  }

  /** Rows [from, from + n) as float32, row-major. */
  readRange(from: number, n: number): Float32Array {
    const bytes = n * this.rb;
    if (bytes > this.buf.length) this.buf = Buffer.allocUnsafe(bytes);
    if (preadFully(this.fd, this.buf, bytes, from * this.rb) < bytes) this.endedEarly();
    return this.decode(this.buf.subarray(0, bytes), n);
  }

  row(num: number): Float32Array {
    return this.readRange(num, 1);
  }

  /**
   * The inner product of row `num` with `query`, read into a reused buffer
   * and scored in place (no per-row allocation): the rescoring hot path.
   * Same value as dot(query, row(num)).
   */
  dotRow(num: number, query: Float32Array): number {
    if (preadFully(this.fd, this.rowBuf, this.rb, num * this.rb) < this.rb) this.endedEarly();
    const dim = this.dim;
    let s = 0;
    if (this.dtype === 'f32') {
      const v = this.rowF32 as Float32Array;
      for (let i = 0; i < dim; i++) s += (query[i] as number) * (v[i] as number);
      return s;
    }
    const v = this.rowF16 as Uint16Array;
    const t = halfTable();
    for (let i = 0; i < dim; i++) s += (query[i] as number) * (t[v[i] as number] as number);
    return s;
  }

  close(): void {
    closeSync(this.fd);
  }

  private endedEarly(): never {
    throw new RetrieverError('INDEX_CORRUPT', `${this.path} ended early: rebuild the index`);
  }

  private decode(bytes: Buffer, n: number): Float32Array {
    if (this.dtype === 'f32') {
      const out = new Float32Array(n * this.dim);
      new Uint8Array(out.buffer).set(bytes);
      return out;
    }
    const halves = new Uint16Array(n * this.dim);
    new Uint8Array(halves.buffer).set(bytes);
    return halvesToFloats(halves);
  }
}

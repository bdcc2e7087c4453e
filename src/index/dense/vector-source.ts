import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { RetrieverError } from '../../errors.js';
import { halvesToFloats } from '../../util/half.js';
import { preadFully, preadFullyAsync } from '../../util/pread.js';

/**
 * Streams precomputed embeddings from the files users already have:
 *   - FAISS IndexFlatIP / IndexFlatL2 (`e5_Flat.index` of Search-R1/FlashRAG),
 *     parsed directly: fourcc, header (d, ntotal, …), then ntotal·d float32;
 *   - NumPy .npy (C order, float32 or float16, shape (n, d));
 *   - .fbin (big-ann-benchmarks: int32 n, int32 d, float32 rows).
 * Nothing is loaded whole: rows are read in ranges.
 */
export type VectorFileFormat = 'faiss' | 'npy' | 'fbin';

export interface VectorSource {
  readonly path: string;
  readonly format: VectorFileFormat;
  readonly count: number;
  readonly dim: number;
  /** Rows [from, from + n) as float32. */
  read(from: number, n: number): Float32Array;
  /** `read` with the disk read on libuv's thread pool (read-ahead while the caller works). */
  readAsync(from: number, n: number): Promise<Float32Array>;
  close(): void;
}

export function detectFormat(path: string): VectorFileFormat {
  if (path.endsWith('.npy')) return 'npy';
  if (path.endsWith('.fbin')) return 'fbin';
  if (path.endsWith('.index') || path.endsWith('.faiss')) return 'faiss';
  throw new RetrieverError('BAD_INPUT', `cannot tell the format of ${path}: use a .index (FAISS), .npy or .fbin file`);
}

export function openVectorSource(path: string, format: VectorFileFormat = detectFormat(path)): VectorSource {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw new RetrieverError('BAD_INPUT', `cannot open vectors ${path}: ${(err as Error).message}`, { cause: err });
  }
  try {
    const size = fstatSync(fd).size;
    const head = Buffer.alloc(Math.min(size, 4096));
    readSync(fd, head, 0, head.length, 0);
    const layout =
      format === 'faiss' ? faissLayout(path, head) : format === 'npy' ? npyLayout(path, head) : fbinLayout(path, head);
    const bytesPerValue = layout.dtype === 'f32' ? 4 : 2;
    const expected = layout.offset + layout.count * layout.dim * bytesPerValue;
    if (size < expected) {
      throw new RetrieverError(
        'BAD_INPUT',
        `${path} is truncated: ${size} bytes, the header promises ${expected} (${layout.count} × ${layout.dim})`,
      );
    }
    return new FileVectorSource(path, format, fd, layout);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

interface Layout {
  offset: number;
  count: number;
  dim: number;
  dtype: 'f32' | 'f16';
}

function faissLayout(path: string, h: Buffer): Layout {
  const fourcc = h.toString('latin1', 0, 4);
  if (fourcc !== 'IxFI' && fourcc !== 'IxF2' && fourcc !== 'IxFl') {
    throw new RetrieverError(
      'BAD_INPUT',
      `${path} is a FAISS "${fourcc}" index; only flat indexes (IndexFlatIP/IndexFlatL2, fourcc IxFI/IxF2) hold the raw vectors to import`,
    );
  }
  const dim = h.readInt32LE(4);
  const count = Number(h.readBigInt64LE(8));
  // two dummy int64, is_trained (1 byte), metric_type (int32), then metric_arg when metric_type > 1
  const metric = h.readInt32LE(8 + 8 + 8 + 8 + 1);
  let p = 37 + (metric > 1 ? 4 : 0);
  const floats = Number(h.readBigUInt64LE(p));
  p += 8;
  if (floats !== count * dim) {
    throw new RetrieverError(
      'BAD_INPUT',
      `${path}: header says ${count} × ${dim} vectors but the data holds ${floats} floats; the file is damaged`,
    );
  }
  return { offset: p, count, dim, dtype: 'f32' };
}

function npyLayout(path: string, h: Buffer): Layout {
  if (h.toString('latin1', 0, 6) !== '\x93NUMPY') throw new RetrieverError('BAD_INPUT', `${path} is not a .npy file`);
  const major = h[6] as number;
  const hlen = major === 1 ? h.readUInt16LE(8) : h.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = h.toString('latin1', start, start + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shape = /'shape':\s*\((\d+),\s*(\d+),?\s*\)/.exec(header);
  if (!shape || fortran !== 'False' || (descr !== '<f4' && descr !== '<f2')) {
    throw new RetrieverError(
      'BAD_INPUT',
      `${path}: need a C-order float32 or float16 matrix of shape (n, d), found ${header.trim()}`,
    );
  }
  return {
    offset: start + hlen,
    count: Number(shape[1]),
    dim: Number(shape[2]),
    dtype: descr === '<f4' ? 'f32' : 'f16',
  };
}

function fbinLayout(path: string, h: Buffer): Layout {
  if (h.length < 8) throw new RetrieverError('BAD_INPUT', `${path} is too short for an .fbin header`);
  return { offset: 8, count: h.readInt32LE(0), dim: h.readInt32LE(4), dtype: 'f32' };
}

class FileVectorSource implements VectorSource {
  readonly count: number;
  readonly dim: number;

  constructor(
    readonly path: string,
    readonly format: VectorFileFormat,
    private readonly fd: number,
    private readonly layout: Layout,
  ) {
    this.count = layout.count;
    this.dim = layout.dim;
  }

  read(from: number, n: number): Float32Array {
    const bytes = new Uint8Array(n * this.dim * this.bpv); // offset 0: safe to view as floats
    return this.decode(from, bytes, preadFully(this.fd, bytes, bytes.length, this.position(from)));
  }

  async readAsync(from: number, n: number): Promise<Float32Array> {
    const bytes = new Uint8Array(n * this.dim * this.bpv);
    return this.decode(from, bytes, await preadFullyAsync(this.fd, bytes, bytes.length, this.position(from)));
  }

  private get bpv(): number {
    return this.layout.dtype === 'f32' ? 4 : 2;
  }

  private position(row: number): number {
    return this.layout.offset + row * this.dim * this.bpv;
  }

  private decode(from: number, bytes: Uint8Array, got: number): Float32Array {
    if (got < bytes.length)
      throw new RetrieverError('BAD_INPUT', `${this.path} ended early at row ${from + got / (this.dim * this.bpv)}`);
    if (this.layout.dtype === 'f32') return new Float32Array(bytes.buffer);
    return halvesToFloats(new Uint16Array(bytes.buffer));
  }

  close(): void {
    closeSync(this.fd);
  }
}

import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { RetrieverError } from '../../errors.js';
import { preadFully, pwriteFullyAsync } from '../../util/pread.js';
import { fsyncPath } from '../../util/fs-durable.js';
import { encodeHeader, layout, listOffsets, type IvfHeader } from './ivf-format.js';
import { IvfKernels } from './ivf-kernels.js';
import { encodeRows, recordBytes } from './ivf-encode.js';
import { IvfPool } from './ivf-pool.js';
import { Quantizer, trainMeans, type QuantizerMeans } from './ivf-quantizer.js';
import type { VectorReader } from './vectors-file.js';

export interface IvfBuildOptions {
  lists: number;
  /** Rounds of the rotation (each: signs, then a Walsh-Hadamard window). */
  rounds?: number;
  threads: number;
  signal?: AbortSignal;
  /** Keep what an interrupted build of the same vectors and lists already did. */
  resume?: boolean;
  /** Hears each step's progress: its name, and the share of it done (0 to 1). */
  onProgress?: (step: 'train' | 'encode' | 'write', done: number) => void;
}

/** Rotation rounds: two mix every coordinate with every other (ivf-kernels rotate); four leave it well spread. */
export const DEFAULT_ROUNDS = 4;
/** Rows of the k-means sample per list (FAISS warns below 39; the means change little past 30), and its floor. */
const SAMPLE_PER_LIST = 32;
const SAMPLE_MIN = 50_000;
/** Vectors assigned and encoded per step: about half a second on 2 cores at 768 dimensions. */
const BATCH = 16_384;
/** Payload bytes the write step places in memory at a time (a pass over the records each). */
const GROUP_BYTES = 512 * 2 ** 20;

/**
 * Builds `path` (ivf-format.ts) from the vectors of `reader`: k-means lists on a sample, then
 * one pass that assigns each vector to its nearest list (through an HNSW graph of the means),
 * rotates its residual and keeps its sign bits and factor, in num order, in `path.records`; then
 * the lists are written out from it. The means and the records are kept until the file is
 * whole, so a stopped build resumes where it was (`resume`).
 */
export async function buildIvf(reader: VectorReader, path: string, opts: IvfBuildOptions): Promise<IvfHeader> {
  const dim = reader.dim;
  const n = reader.count;
  const lists = Math.max(1, Math.min(opts.lists, n));
  const rounds = opts.rounds ?? DEFAULT_ROUNDS;
  const meansPath = `${path}.means`;
  // records of format 2 (with <r, c>): an interrupted build of format 1 is not resumed from
  const recordsPath = `${path}.records2`;
  rmSync(`${path}.records`, { force: true });
  if (!opts.resume) {
    rmSync(meansPath, { force: true });
    rmSync(recordsPath, { force: true });
  }
  const shape = layout(dim, rounds, 1, new Uint32Array(lists));
  const signs = rotationSigns(rounds, shape.dimPadded);
  const pool =
    opts.threads > 1
      ? new IvfPool(opts.threads, {
          shape,
          signs,
          vectors: { path: reader.path, dtype: reader.dtype, count: reader.count },
        })
      : undefined;
  try {
    const trainKernels = new IvfKernels(shape.dimPadded, shape.window, rounds, signs, 1);
    const kept = opts.resume ? loadMeans(meansPath, lists, shape.dimPadded) : undefined;
    // records are of the means they were made with: new means, new records
    if (!kept) rmSync(recordsPath, { force: true });
    const means = kept ?? (await train(reader, lists, shape.dimPadded, trainKernels, pool, opts));
    if (!kept) await saveMeans(meansPath, means);
    const kernels = new IvfKernels(shape.dimPadded, shape.window, rounds, signs, 1);
    const quantizer = new Quantizer(kernels, means);
    const encode = pool
      ? (await pool.setMeans(means), (start: number, count: number) => pool.encode(start, count))
      : (start: number, count: number) =>
          Promise.resolve(encodeRows(reader.readRange(start, count), dim, shape, quantizer, kernels, means));
    const sizes = await encodeAll(
      reader.count,
      quantizer.lists,
      encode,
      pool ? 2 * pool.size : 1,
      shape,
      recordsPath,
      opts,
    );
    const head = layout(dim, rounds, quantizer.coarseCount, sizes);
    await writeIndex(path, head, means, signs, sizes, recordsPath, opts);
    rmSync(recordsPath, { force: true });
    rmSync(meansPath, { force: true });
    return head;
  } finally {
    await pool?.close();
  }
}

async function train(
  reader: VectorReader,
  lists: number,
  dimPadded: number,
  kernels: IvfKernels,
  pool: IvfPool | undefined,
  opts: IvfBuildOptions,
): Promise<QuantizerMeans> {
  const n = reader.count;
  const size = Math.min(n, Math.max(SAMPLE_MIN, lists * SAMPLE_PER_LIST));
  const dim = reader.dim;
  const sample = new Float32Array(size * dimPadded);
  // evenly spaced rows, read in runs where they are adjacent
  for (let i = 0; i < size;) {
    if (i % 4096 === 0) {
      await new Promise((r) => setImmediate(r));
      opts.signal?.throwIfAborted();
      opts.onProgress?.('train', (0.2 * i) / size);
    }
    const row = Math.floor((i * n) / size);
    let run = 1;
    while (i + run < size && Math.floor(((i + run) * n) / size) === row + run && run < 4096) run++;
    const rows = reader.readRange(row, run);
    for (let r = 0; r < run; r++) sample.set(rows.subarray(r * dim, (r + 1) * dim), (i + r) * dimPadded);
    i += run;
  }
  return trainMeans(sample, lists, {
    kernels,
    ...(pool ? { nearest: (points, means) => pool.nearest(points, means) } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    onProgress: (d) => opts.onProgress?.('train', 0.2 + 0.8 * d),
  });
}

/** The rotation's signs, ±1, from a fixed seed (splitmix32): the same for every build. */
function rotationSigns(rounds: number, dimPadded: number): Float32Array {
  let s = 0x9e3779b9;
  const out = new Float32Array(rounds * dimPadded);
  for (let i = 0; i < out.length; i++) {
    s = (s + 0x9e3779b9) | 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    z ^= z >>> 16;
    out[i] = z & 1 ? 1 : -1;
  }
  return out;
}

/**
 * Encodes every vector into `recordsPath` (encode-rows.ts records), in num order, `inFlight`
 * batches at a time (a pool's threads work while this thread writes). The whole records already
 * there are kept (resume).
 */
async function encodeAll(
  n: number,
  lists: number,
  encode: (start: number, count: number) => Promise<{ records: Uint8Array; lists: Uint32Array }>,
  inFlight: number,
  shape: IvfHeader,
  recordsPath: string,
  opts: IvfBuildOptions,
): Promise<Uint32Array> {
  const codeBytes = shape.dimPadded / 8;
  const rec = recordBytes(shape.dimPadded);
  const sizes = new Uint32Array(lists);
  const fd = openSync(recordsPath, existsSync(recordsPath) ? 'r+' : 'w+');
  const batch = inFlight > 1 ? BATCH / 2 : BATCH;
  const queue: Array<{ start: number; done: Promise<{ records: Uint8Array; lists: Uint32Array }> }> = [];
  try {
    const kept = Math.min(n, Math.floor(fstatSync(fd).size / rec));
    ftruncateSync(fd, kept * rec);
    countKept(fd, kept, rec, codeBytes, sizes);
    let next = kept;
    const fill = (): void => {
      while (queue.length < inFlight && next < n) {
        const m = Math.min(batch, n - next);
        const done = encode(next, m);
        done.catch(() => undefined); // awaited in order below
        queue.push({ start: next, done });
        next += m;
      }
    };
    fill();
    while (queue.length > 0) {
      opts.signal?.throwIfAborted();
      const head = queue.shift() as (typeof queue)[number];
      const { records, lists: got } = await head.done;
      fill();
      for (const l of got) sizes[l] = (sizes[l] as number) + 1;
      await pwriteFullyAsync(fd, records, head.start * rec);
      opts.onProgress?.('encode', (head.start + got.length) / n);
    }
    opts.signal?.throwIfAborted();
  } finally {
    await Promise.allSettled(queue.map((q) => q.done));
    closeSync(fd);
  }
  return sizes;
}

/** The list sizes of the records a resumed build keeps. */
function countKept(fd: number, kept: number, rec: number, codeBytes: number, sizes: Uint32Array): void {
  const step = 65_536;
  const buf = Buffer.alloc(step * rec);
  for (let at = 0; at < kept; at += step) {
    const m = Math.min(step, kept - at);
    preadFully(fd, buf, m * rec, at * rec);
    for (let i = 0; i < m; i++) {
      const l = buf.readUInt32LE(i * rec + codeBytes + 4);
      if (l >= sizes.length)
        throw new RetrieverError('INDEX_CORRUPT', `an interrupted IVF build's records name list ${l}`);
      sizes[l] = (sizes[l] as number) + 1;
    }
  }
}

/**
 * Writes the index file from the records: lists in groups of about GROUP_BYTES of payload, each
 * group placed in memory from one pass over the records (vectors in num order within a list),
 * then the file renamed into place.
 */
async function writeIndex(
  path: string,
  head: IvfHeader,
  means: QuantizerMeans,
  signs: Float32Array,
  sizes: Uint32Array,
  recordsPath: string,
  opts: IvfBuildOptions,
): Promise<void> {
  const tmp = `${path}.tmp`;
  const offsets = listOffsets(head, sizes);
  const codeBytes = head.dimPadded / 8;
  const rec = recordBytes(head.dimPadded);
  const fd = openSync(tmp, 'w');
  const records = openSync(recordsPath, 'r');
  try {
    ftruncateSync(fd, head.fileBytes);
    const bytes = (a: ArrayBufferView): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    await pwriteFullyAsync(fd, encodeHeader(head), 0);
    await pwriteFullyAsync(fd, bytes(means.fine), head.centroidsAt);
    await pwriteFullyAsync(fd, bytes(means.coarse), head.coarseAt);
    await pwriteFullyAsync(fd, bytes(means.children), head.childrenAt);
    await pwriteFullyAsync(fd, bytes(signs), head.signsAt);
    await pwriteFullyAsync(fd, bytes(offsets), head.offsetsAt);
    await pwriteFullyAsync(fd, bytes(sizes), head.sizesAt);
    for (let first = 0; first < head.lists;) {
      let last = first;
      while (last < head.lists && (offsets[last + 1] as number) - (offsets[first] as number) <= GROUP_BYTES) last++;
      if (last === first) last = first + 1; // a list larger than a group goes alone
      const base = offsets[first] as number;
      const group = Buffer.alloc((offsets[last] as number) - base);
      await placeGroup(records, head.count, rec, codeBytes, first, last, offsets, sizes, base, group, opts.signal);
      await pwriteFullyAsync(fd, group, base);
      opts.onProgress?.('write', last / head.lists);
      first = last;
    }
  } finally {
    closeSync(records);
    closeSync(fd);
  }
  fsyncPath(tmp);
  renameSync(tmp, path);
}

/** Places the records of lists [first, last) into `group` (their payloads, from file offset `base`). */
async function placeGroup(
  records: number,
  count: number,
  rec: number,
  codeBytes: number,
  first: number,
  last: number,
  offsets: Float64Array,
  sizes: Uint32Array,
  base: number,
  group: Buffer,
  signal: AbortSignal | undefined,
): Promise<void> {
  const next = new Uint32Array(last - first);
  const step = 65_536;
  const buf = Buffer.alloc(step * rec);
  for (let at = 0; at < count; at += step) {
    await new Promise((r) => setImmediate(r));
    signal?.throwIfAborted();
    const m = Math.min(step, count - at);
    preadFully(records, buf, m * rec, at * rec);
    for (let i = 0; i < m; i++) {
      const r = i * rec;
      const l = buf.readUInt32LE(r + codeBytes + 4);
      if (l < first || l >= last) continue;
      const rank = next[l - first] as number;
      next[l - first] = rank + 1;
      const n = sizes[l] as number;
      const p = (offsets[l] as number) - base;
      const blockAt = p + Math.floor(rank / 16) * codeBytes * 16;
      const lane = rank % 16;
      for (let b = 0; b < codeBytes; b++) group[blockAt + b * 16 + lane] = buf[r + b] as number;
      const tail = p + Math.ceil(n / 16) * codeBytes * 16;
      buf.copy(group, tail + rank * 4, r + codeBytes, r + codeBytes + 4);
      group.writeUInt32LE(at + i, tail + n * 4 + rank * 4);
      buf.copy(group, tail + n * 8 + rank * 4, r + codeBytes + 8, r + codeBytes + 12);
    }
  }
}

/** The trained means, kept beside an interrupted build: coarse count, children, coarse, fine. */
async function saveMeans(path: string, m: QuantizerMeans): Promise<void> {
  const k1 = m.children.length - 1;
  const head = Buffer.alloc(4);
  head.writeUInt32LE(k1, 0);
  const parts = [head, m.children, m.coarse, m.fine].map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength));
  const fd = openSync(`${path}.tmp`, 'w');
  try {
    await pwriteFullyAsync(fd, Buffer.concat(parts), 0);
  } finally {
    closeSync(fd);
  }
  renameSync(`${path}.tmp`, path);
}

function loadMeans(path: string, lists: number, dimPadded: number): QuantizerMeans | undefined {
  if (!existsSync(path)) return undefined;
  const b = readFileSync(path);
  if (b.length < 4) return undefined;
  const k1 = b.readUInt32LE(0);
  const want = 4 + (k1 + 1) * 4 + k1 * dimPadded * 4 + lists * dimPadded * 4;
  if (k1 < 1 || b.length !== want) return undefined;
  const copy = new Uint8Array(b).buffer;
  const children = new Uint32Array(copy, 4, k1 + 1);
  if (children[k1] !== lists) return undefined;
  const coarse = new Float32Array(copy, 4 + (k1 + 1) * 4, k1 * dimPadded);
  const fine = new Float32Array(copy, 4 + (k1 + 1) * 4 + k1 * dimPadded * 4, lists * dimPadded);
  return { coarse, fine, children };
}

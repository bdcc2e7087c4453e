import { closeSync, fstatSync, openSync } from 'node:fs';
import { RetrieverError } from '../../errors.js';
import { preadFully } from '../../util/pread.js';

/**
 * The IVF index's file (`dense.ivf`), little-endian:
 *
 *   magic "RMCPIVF1" · u32 header length · the header (JSON) · padding to 64
 *   centroids   lists × dimPadded f32, the lists' means (k-means), unrotated, zero-padded
 *   coarse      coarse × dimPadded f32, the means the lists are grouped under
 *   children    (coarse + 1) u32: the lists of coarse mean j are [children[j], children[j + 1])
 *   signs       rounds × dimPadded f32, the rotation's signs (±1)
 *   offsets     (lists + 1) f64, where each list's payload starts (bytes from the file's start)
 *   sizes       lists u32, vectors in each list
 *   payloads    per list of n vectors in ⌈n/16⌉ blocks of 16: the codes (per block,
 *               dimPadded/8 rows of 16 bytes, byte j of row p being vector j's code byte p),
 *               then n f32 factors, then n u32 chunk nums, then (version 2) n f32 <r, c>;
 *               each list padded to 64 bytes
 *
 * A vector's code is the sign bits of its rotated residual r from its list's mean c (RaBitQ's
 * 1-bit code); its factor turns a code's table sum into an inner product (ivf-index.ts). Version
 * 2 adds <r, c>, so that a query's residual q − c is what the code is read against: version 1
 * read the whole query, whose share along the lists' common direction (large for e5 vectors)
 * widened the estimate's error.
 */
export const IVF_MAGIC = 'RMCPIVF1';
export const IVF_VERSION = 2;
/** Versions this server reads. */
const READS = [1, 2];

export interface IvfHeader {
  version: number;
  dim: number;
  /** dim rounded up to a multiple of 8 (a code byte holds 8 coordinates). */
  dimPadded: number;
  /** Walsh-Hadamard window of the rotation: the largest power of two ≤ dimPadded. */
  window: number;
  rounds: number;
  lists: number;
  coarse: number;
  count: number;
  /** The largest list, vectors (the scan's buffers are sized by it). */
  maxList: number;
  centroidsAt: number;
  coarseAt: number;
  childrenAt: number;
  signsAt: number;
  offsetsAt: number;
  sizesAt: number;
  payloadAt: number;
  fileBytes: number;
}

const HEAD = 12;

export const align64 = (n: number): number => Math.ceil(n / 64) * 64;

/** Bytes of a list of `n` vectors' payload, in a file of `version`. */
export function payloadBytes(n: number, dimPadded: number, version: number = IVF_VERSION): number {
  return align64(Math.ceil(n / 16) * (dimPadded / 8) * 16 + n * (version >= 2 ? 12 : 8));
}

/** The header's fields for an index of these shapes (every offset derived). */
export function layout(
  dim: number,
  rounds: number,
  coarse: number,
  sizes: Uint32Array,
  version: number = IVF_VERSION,
): IvfHeader {
  const dimPadded = Math.ceil(dim / 8) * 8;
  let window = 8;
  while (window * 2 <= dimPadded) window *= 2;
  const lists = sizes.length;
  let count = 0;
  let maxList = 0;
  for (const n of sizes) {
    count += n;
    maxList = Math.max(maxList, n);
  }
  const head: IvfHeader = {
    version,
    dim,
    dimPadded,
    window,
    rounds,
    lists,
    coarse,
    count,
    maxList,
    centroidsAt: 0,
    coarseAt: 0,
    childrenAt: 0,
    signsAt: 0,
    offsetsAt: 0,
    sizesAt: 0,
    payloadAt: 0,
    fileBytes: 0,
  };
  // the header's own length depends on the offsets written in it: settle them in two passes
  for (let pass = 0; pass < 2; pass++) {
    head.centroidsAt = align64(HEAD + Buffer.byteLength(JSON.stringify(head)) + 64);
    head.coarseAt = align64(head.centroidsAt + lists * dimPadded * 4);
    head.childrenAt = align64(head.coarseAt + coarse * dimPadded * 4);
    head.signsAt = align64(head.childrenAt + (coarse + 1) * 4);
    head.offsetsAt = align64(head.signsAt + rounds * dimPadded * 4);
    head.sizesAt = align64(head.offsetsAt + (lists + 1) * 8);
    head.payloadAt = align64(head.sizesAt + lists * 4);
    let end = head.payloadAt;
    for (const n of sizes) end += payloadBytes(n, dimPadded, version);
    head.fileBytes = end;
  }
  return head;
}

export function encodeHeader(h: IvfHeader): Buffer {
  const json = Buffer.from(JSON.stringify(h));
  const out = Buffer.alloc(h.centroidsAt);
  out.write(IVF_MAGIC, 0, 'latin1');
  out.writeUInt32LE(json.length, 8);
  json.copy(out, HEAD);
  return out;
}

/** The list offsets (lists + 1, the last the file's end) of a header's layout. */
export function listOffsets(h: IvfHeader, sizes: Uint32Array): Float64Array {
  const out = new Float64Array(sizes.length + 1);
  let at = h.payloadAt;
  sizes.forEach((n, i) => {
    out[i] = at;
    at += payloadBytes(n, h.dimPadded, h.version);
  });
  out[sizes.length] = at;
  return out;
}

/**
 * Reads and checks a file's header, centroids, signs and list table: the magic, the version,
 * shapes that agree with each other and with `dim` and `count`, and every list inside the file.
 * A damaged or foreign file is INDEX_CORRUPT naming it and the fix.
 */
export function readIvfHead(
  path: string,
  expect: { dim: number; count: number },
  fixHint: string,
): {
  head: IvfHeader;
  centroids: Float32Array;
  coarse: Float32Array;
  children: Uint32Array;
  signs: Float32Array;
  offsets: Float64Array;
  sizes: Uint32Array;
} {
  const bad = (why: string): RetrieverError =>
    new RetrieverError('INDEX_CORRUPT', `${path} is not a usable IVF index (${why}): ${fixHint}`);
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const first = Buffer.alloc(Math.min(size, 64 * 1024));
    preadFully(fd, first, first.length, 0);
    if (first.length < HEAD || first.toString('latin1', 0, 8) !== IVF_MAGIC) throw bad('no IVF magic');
    const len = first.readUInt32LE(8);
    if (HEAD + len > first.length) throw bad('a header longer than the file');
    let h: IvfHeader;
    try {
      h = JSON.parse(first.toString('utf8', HEAD, HEAD + len)) as IvfHeader;
    } catch {
      throw bad('its header is not JSON');
    }
    if (!READS.includes(h.version)) throw bad(`version ${String(h.version)}, this server reads ${READS.join(' and ')}`);
    if (h.dim !== expect.dim || h.count !== expect.count)
      throw bad(`${h.dim}-d × ${h.count}, the manifest says ${expect.dim}-d × ${expect.count}`);
    const sizes0 = new Uint32Array(Math.max(0, Math.min(1 << 22, Number(h.lists) || 0)));
    const want = layout(h.dim, h.rounds, h.coarse, sizes0, h.version);
    if (
      !(h.lists >= 1 && h.lists <= 1 << 22) ||
      !(h.coarse >= 1 && h.coarse <= h.lists) ||
      h.coarseAt !== want.coarseAt ||
      h.childrenAt !== want.childrenAt ||
      h.dimPadded !== want.dimPadded ||
      h.window !== want.window ||
      !(h.rounds >= 1 && h.rounds <= 16) ||
      h.centroidsAt !== want.centroidsAt ||
      h.signsAt !== want.signsAt ||
      h.offsetsAt !== want.offsetsAt ||
      h.sizesAt !== want.sizesAt ||
      h.payloadAt !== want.payloadAt
    )
      throw bad('its header does not add up');
    if (size !== h.fileBytes) throw bad(`${size} bytes, its header says ${h.fileBytes}`);
    const read = (at: number, bytes: number): Buffer => {
      const b = Buffer.alloc(bytes);
      if (preadFully(fd, b, bytes, at) < bytes) throw bad('it ends early');
      return b;
    };
    const floats = (b: Buffer): Float32Array => new Float32Array(b.buffer, b.byteOffset, b.length / 4);
    const centroids = floats(read(h.centroidsAt, h.lists * h.dimPadded * 4)).slice();
    const coarse = floats(read(h.coarseAt, h.coarse * h.dimPadded * 4)).slice();
    const cb = read(h.childrenAt, (h.coarse + 1) * 4);
    const children = new Uint32Array(cb.buffer.slice(cb.byteOffset, cb.byteOffset + cb.length));
    if (children[0] !== 0 || children[h.coarse] !== h.lists) throw bad('its coarse means do not cover its lists');
    for (let j = 0; j < h.coarse; j++)
      if ((children[j] as number) > (children[j + 1] as number)) throw bad('its coarse means do not cover its lists');
    const signs = floats(read(h.signsAt, h.rounds * h.dimPadded * 4)).slice();
    const ob = read(h.offsetsAt, (h.lists + 1) * 8);
    const offsets = new Float64Array(ob.buffer.slice(ob.byteOffset, ob.byteOffset + ob.length));
    const sb = read(h.sizesAt, h.lists * 4);
    const sizes = new Uint32Array(sb.buffer.slice(sb.byteOffset, sb.byteOffset + sb.length));
    const expected = listOffsets(h, sizes);
    let total = 0;
    let maxList = 0;
    for (let l = 0; l < h.lists; l++) {
      total += sizes[l] as number;
      maxList = Math.max(maxList, sizes[l] as number);
      if (offsets[l] !== expected[l]) throw bad(`list ${l} is not where its size puts it`);
    }
    if (offsets[h.lists] !== h.fileBytes || total !== h.count || maxList !== h.maxList)
      throw bad('its lists do not add up to its vectors');
    for (const s of signs) if (s !== 1 && s !== -1) throw bad('a rotation sign is not ±1');
    for (const c of centroids) if (!Number.isFinite(c)) throw bad('a centroid is not finite');
    for (const c of coarse) if (!Number.isFinite(c)) throw bad('a centroid is not finite');
    return { head: h, centroids, coarse, children, signs, offsets, sizes };
  } finally {
    closeSync(fd);
  }
}

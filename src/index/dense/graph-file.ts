import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * Reads the HNSW links out of a graph file saved by USearch 2.x
 * (`index_dense_gt::save_to_stream`, include/usearch/index_dense.hpp and
 * index.hpp), to find nodes that no link at the base level points to. Such a
 * node cannot be reached by a search's walk, whatever its efSearch; USearch's
 * multi-threaded insertion leaves a few (the 2026-11 design notes (git show 97ad262:docs/lab-notes/2026-11-design-notes.md), “HNSW relinking”).
 *
 * Layout, little-endian:
 *   u32 rows, u32 bytes per row, rows × row bytes     the quantised vectors
 *   64-byte head: "usearch", u16 × 3 version, u8 metric, u8 scalar, u8 key kind,
 *     u8 slot kind, u64 present, u64 deleted, u64 dimensions, u8 multi, zeros
 *   u64 × 5: nodes, M, M at level 0, max level, entry slot
 *   i16 level per node
 *   per node: u64 key, i16 level, then per level 0 … level: u32 count and
 *     M (level 0: M at level 0) u32 slots, of which the first count are links
 * The file is read once, in order, through one buffer: wiki-18's graph is
 * ≈ 20 GB, so neither it nor its links are held in memory; what is kept is
 * 8 bytes per node (level, two flags, u32 key).
 */

const HEAD_BYTES = 64;
const MAGIC = 'usearch';
const SCALAR_U32 = 15;
const SCALAR_U64 = 14;
const HEADER_BYTES = 40;
const BUFFER_BYTES = 8 << 20;
/** A removed node's key (`default_free_value`): all ones. */
const FREE_KEY_HIGH = 0xffffffff;

/** The file is not a graph this reader knows; I/O errors are thrown as they come. */
export class GraphFormatError extends Error {}

export interface GraphLinks {
  /** Nodes in the graph, removed ones included. */
  nodes: number;
  /** Nodes removed (their slots wait for reuse). */
  deleted: number;
  connectivity: number;
  connectivityBase: number;
  maxLevel: number;
  /** Key of the node every search starts from (−1 in an empty graph). */
  entryKey: number;
  /** Keys of live nodes, other than the entry, that no base-level link points to, ascending. */
  orphans: number[];
}

/** Sequential reads through one buffer, with `need` keeping at least n bytes ahead of the cursor. */
class FileCursor {
  private readonly buf = Buffer.allocUnsafe(BUFFER_BYTES);
  private start = 0;
  private end = 0;
  /** File offset of buf[0]. */
  private base: number;

  constructor(
    private readonly fd: number,
    readonly path: string,
    offset: number,
  ) {
    this.base = offset;
  }

  need(n: number): Buffer {
    if (this.end - this.start < n) {
      this.buf.copy(this.buf, 0, this.start, this.end);
      this.base += this.start;
      this.end -= this.start;
      this.start = 0;
      while (this.end < n) {
        const got = readSync(this.fd, this.buf, this.end, BUFFER_BYTES - this.end, this.base + this.end);
        if (got === 0)
          throw new GraphFormatError(`${this.path} ends at byte ${this.base + this.end}, inside a graph node`);
        this.end += got;
      }
    }
    return this.buf;
  }

  get at(): number {
    return this.start;
  }

  /** The cursor's position in the file. */
  get offset(): number {
    return this.base + this.start;
  }

  skip(n: number): void {
    this.start += n;
  }
}

/** Links a node may have at a level: USearch's connectivity is tens; a larger figure is a damaged header. */
const MAX_LINKS = 4096;

/** The head and header fields `readGraphLinks` needs, checked; `offset` is where the levels start. */
function readHeader(
  fd: number,
  path: string,
): { header: Omit<GraphLinks, 'orphans' | 'entryKey'>; entrySlot: number; offset: number } {
  const dims = Buffer.alloc(8);
  const size = fstatSync(fd).size;
  if (readSync(fd, dims, 0, 8, 0) < 8) throw new GraphFormatError(`${path} ends before its vectors' header`);
  // rows × bytes a row: a damaged header names a vector block past the file's end (it was read at
  // position 2^64 - 2^36 and failed as a RangeError naming nothing)
  const vectorsEnd = 8 + dims.readUInt32LE(0) * dims.readUInt32LE(4);
  const head = Buffer.alloc(HEAD_BYTES + HEADER_BYTES);
  if (vectorsEnd + head.length > size || readSync(fd, head, 0, head.length, vectorsEnd) < head.length)
    throw new GraphFormatError(`${path} ends before its graph header (its vectors' header is damaged)`);
  if (head.toString('latin1', 0, MAGIC.length) !== MAGIC)
    throw new GraphFormatError(`${path} has no USearch head after its vectors`);
  const major = head.readUInt16LE(7);
  if (major !== 2) throw new GraphFormatError(`${path} was saved by USearch ${major}.x; this reader knows 2.x`);
  const keyKind = head.readUInt8(15);
  const slotKind = head.readUInt8(16);
  if (keyKind !== SCALAR_U64 || slotKind !== SCALAR_U32)
    throw new GraphFormatError(
      `${path} has key kind ${keyKind} and slot kind ${slotKind}; this reader knows u64 keys and u32 slots`,
    );
  const h = HEAD_BYTES;
  const field = (i: number): number => Number(head.readBigUInt64LE(h + 8 * i));
  const header = {
    nodes: field(0),
    deleted: Number(head.readBigUInt64LE(25)),
    connectivity: field(1),
    connectivityBase: field(2),
    maxLevel: field(3),
  };
  const offset = vectorsEnd + HEAD_BYTES + HEADER_BYTES;
  // each node takes at least its level (2 bytes) and key (8 bytes): more nodes than fit is damage
  if (header.nodes > (size - offset) / 10 || header.connectivity > MAX_LINKS || header.connectivityBase > MAX_LINKS)
    throw new GraphFormatError(
      `${path}: its header claims ${header.nodes} nodes of ${header.connectivity}/${header.connectivityBase} links, more than the file holds`,
    );
  return { header, entrySlot: field(4), offset };
}

/**
 * The graph's shape and its base-level orphans. Keys must be below 2^32
 * (chunk nums are); every level's links are checked to point inside the
 * graph, and the nodes to end where the file does, so a graph that passes
 * cannot send USearch's search outside its memory map (a damaged one would
 * crash the process there, not fail one request).
 */
export function readGraphLinks(path: string): GraphLinks {
  const fd = openSync(path, 'r');
  try {
    const { header, entrySlot, offset } = readHeader(fd, path);
    const n = header.nodes;
    const levelBytes = 4 + 4 * header.connectivity;
    const baseBytes = 4 + 4 * header.connectivityBase;
    const cursor = new FileCursor(fd, path, offset);
    if (n > 0 && entrySlot >= n) throw new GraphFormatError(`${path}: entry slot ${entrySlot} of ${n} nodes`);
    const levels = new Int16Array(n);
    for (let i = 0; i < n; i++) {
      const buf = cursor.need(2);
      const level = buf.readInt16LE(cursor.at);
      if (level < 0 || level > header.maxLevel)
        throw new GraphFormatError(`${path}: node ${i} has level ${level}, the graph's top is ${header.maxLevel}`);
      levels[i] = level;
      cursor.skip(2);
    }
    const keys = new Uint32Array(n);
    const live = new Uint8Array(n);
    const linked = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const bytes = 10 + baseBytes + levelBytes * (levels[i] as number);
      const buf = cursor.need(bytes);
      const p = cursor.at;
      const high = buf.readUInt32LE(p + 4);
      if (high === 0) {
        keys[i] = buf.readUInt32LE(p);
        live[i] = 1;
      } else if (high !== FREE_KEY_HIGH) throw new GraphFormatError(`${path}: node ${i} has key above 2^32`);
      const count = buf.readUInt32LE(p + 10);
      if (count > header.connectivityBase)
        throw new GraphFormatError(`${path}: node ${i} claims ${count} links at level 0`);
      for (let j = 0; j < count; j++) {
        const to = buf.readUInt32LE(p + 14 + 4 * j);
        if (to >= n) throw new GraphFormatError(`${path}: node ${i} links to slot ${to} of ${n}`);
        linked[to] = 1;
      }
      // the upper levels' links are followed by every search's descent: each must point inside too
      for (let level = 1, at = p + 10 + baseBytes; level <= (levels[i] as number); level++, at += levelBytes) {
        const upper = buf.readUInt32LE(at);
        if (upper > header.connectivity)
          throw new GraphFormatError(`${path}: node ${i} claims ${upper} links at level ${level}`);
        for (let j = 0; j < upper; j++) {
          const to = buf.readUInt32LE(at + 4 + 4 * j);
          if (to >= n) throw new GraphFormatError(`${path}: node ${i} links to slot ${to} of ${n} at level ${level}`);
        }
      }
      cursor.skip(bytes);
    }
    const end = cursor.offset;
    const size = fstatSync(fd).size;
    if (end !== size)
      throw new GraphFormatError(`${path} is ${size} bytes but its graph ends at byte ${end} (levels damaged)`);
    const orphans: number[] = [];
    for (let i = 0; i < n; i++)
      if (live[i] === 1 && linked[i] === 0 && i !== entrySlot) orphans.push(keys[i] as number);
    orphans.sort((a, b) => a - b);
    return { ...header, entryKey: n > 0 ? (keys[entrySlot] as number) : -1, orphans };
  } finally {
    closeSync(fd);
  }
}

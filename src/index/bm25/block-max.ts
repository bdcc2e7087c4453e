import { closeSync, openSync } from 'node:fs';
import { RetrieverError } from '../../errors.js';
import { preadFully, writeAllAt } from '../../util/pread.js';
import { readPosting, type PostingRead } from './postings-codec.js';
import { FileWriter } from './run-files.js';
import type { Bm25Params } from './scoring.js';

/**
 * The block-max file (`bm25.blocks`): for each postings list longer than one
 * block, the list cut into blocks of BLOCK_SIZE postings, and for each block
 * its last doc, where it ends in the list, and the (tf, length byte) of its
 * best-scoring posting. A query turns that pair into the block's exact
 * maximum contribution (the length norms are fixed at build time, and the
 * query weight only scales it), so a scorer can skip whole blocks and windows
 * that cannot reach the top k, and jump into a list without decoding what
 * comes before.
 *
 * Layout, little-endian:
 *   header   (64 bytes)  magic, version, block size, k1, b, avgdl,
 *                         list count, block count, directory offset
 *   blocks   (16 bytes each)  u32 last doc, u32 end byte (in the list),
 *                             u32 best tf, u32 best length byte
 *   directory  f64 postings offset of each list (ascending), then
 *              f64 first block of each list, plus one past the last
 */
export const BLOCK_SIZE = 128;

const MAGIC = 'RMBM25B1';
const VERSION = 1;
const HEADER_BYTES = 64;
const ROW_BYTES = 16;

export interface BlockListEntry {
  offset: number;
  nbytes: number;
  df: number;
}

export interface BlockMaxBuildInput {
  postingsPath: string;
  /** One length byte per chunk (the norms file's contents). */
  norms: Uint8Array;
  /** The lists to cut (only lists longer than one block need an entry), in ascending offset. */
  lists: Iterable<BlockListEntry>;
  params: Bm25Params;
  avgdl: number;
  /** k1 · (1 − b + b · dl / avgdl) by length byte: the table the searcher scores with. */
  normTable: Float32Array;
  out: string;
}

/** Writes the block-max file for a finished postings file. Returns the number of blocks. */
export function writeBlockMaxes(input: BlockMaxBuildInput): { lists: number; blocks: number } {
  const fd = openSync(input.postingsPath, 'r');
  const out = new FileWriter(input.out);
  const offsets: number[] = [];
  const firsts: number[] = [];
  let blocks = 0;
  let buf = Buffer.allocUnsafe(1 << 20);
  const row = Buffer.alloc(ROW_BYTES);
  const read: PostingRead = { gap: 0, tf: 0, next: 0 };
  const table = input.normTable;
  const norms = input.norms;
  try {
    out.write(Buffer.alloc(HEADER_BYTES));
    let lastOffset = -1;
    for (const list of input.lists) {
      if (list.offset <= lastOffset) throw new Error('block-max lists must come in ascending offset order');
      lastOffset = list.offset;
      if (list.nbytes > buf.length) buf = Buffer.allocUnsafe(Math.max(list.nbytes, buf.length * 2));
      if (preadFully(fd, buf, list.nbytes, list.offset) < list.nbytes) {
        throw new RetrieverError('INDEX_CORRUPT', `${input.postingsPath} ends inside a postings list`);
      }
      offsets.push(list.offset);
      firsts.push(blocks);
      let pos = 0;
      let doc = 0;
      let inBlock = 0;
      let bestTf = 0;
      let bestNorm = 0;
      let best = -1;
      while (pos < list.nbytes) {
        // the build's pass: the shared decoder (the scorers inline it in their hot loops)
        readPosting(buf, pos, read);
        pos = read.next;
        doc += read.gap;
        const tf = read.tf;
        const norm = norms[doc] as number;
        // the contribution without the query weight, which scales every posting alike
        const s = tf / (tf + (table[norm] as number));
        if (s > best) {
          best = s;
          bestTf = tf;
          bestNorm = norm;
        }
        if (++inBlock === BLOCK_SIZE || pos >= list.nbytes) {
          row.writeUInt32LE(doc, 0);
          row.writeUInt32LE(pos, 4);
          row.writeUInt32LE(bestTf, 8);
          row.writeUInt32LE(bestNorm, 12);
          out.write(row);
          blocks++;
          inBlock = 0;
          best = -1;
        }
      }
    }
    firsts.push(blocks);
    out.write(new Uint8Array(Float64Array.from(offsets).buffer));
    out.write(new Uint8Array(Float64Array.from(firsts).buffer));
  } finally {
    out.close();
    closeSync(fd);
  }
  const header = Buffer.alloc(HEADER_BYTES);
  header.write(MAGIC, 0, 'latin1');
  header.writeUInt32LE(VERSION, 8);
  header.writeUInt32LE(BLOCK_SIZE, 12);
  header.writeDoubleLE(input.params.k1, 16);
  header.writeDoubleLE(input.params.b, 24);
  header.writeDoubleLE(input.avgdl, 32);
  header.writeDoubleLE(offsets.length, 40);
  header.writeDoubleLE(blocks, 48);
  header.writeDoubleLE(HEADER_BYTES + blocks * ROW_BYTES, 56);
  // the header goes over its placeholder last: a file cut short has no valid header
  const hfd = openSync(input.out, 'r+');
  try {
    writeAllAt(hfd, header, 0);
  } finally {
    closeSync(hfd);
  }
  return { lists: offsets.length, blocks };
}

/** One list's blocks, as a scorer reads them. */
export interface ListBlocks {
  count: number;
  lastDoc: Uint32Array;
  endByte: Uint32Array;
  bestTf: Uint32Array;
  bestNorm: Uint32Array;
}

/**
 * Reads a block-max file: the directory lives in memory (16 bytes a list),
 * each list's blocks are read with one pread when a query needs them.
 */
export class BlockMaxReader {
  private readonly fd: number;
  private readonly offsets: Float64Array;
  private readonly firsts: Float64Array;
  // a plain Uint8Array: its own buffer, so the u32 view below is aligned
  private buf = new Uint8Array(1 << 16);

  constructor(
    private readonly path: string,
    expect: { params: Bm25Params; avgdl: number },
  ) {
    const corrupt = (why: string) =>
      new RetrieverError('INDEX_CORRUPT', `${path} ${why}: rebuild the index (manifest.json's rebuild_command)`);
    this.fd = openSync(path, 'r');
    try {
      const header = Buffer.alloc(HEADER_BYTES);
      if (preadFully(this.fd, header, HEADER_BYTES, 0) < HEADER_BYTES) throw corrupt('is too short');
      if (header.toString('latin1', 0, 8) !== MAGIC) throw corrupt('is not a block-max file');
      if (header.readUInt32LE(8) !== VERSION) throw corrupt(`has version ${header.readUInt32LE(8)}, not ${VERSION}`);
      if (header.readUInt32LE(12) !== BLOCK_SIZE) throw corrupt('has another block size');
      const k1 = header.readDoubleLE(16);
      const b = header.readDoubleLE(24);
      const avgdl = header.readDoubleLE(32);
      // the stored best postings are the best under these norms only
      if (k1 !== expect.params.k1 || b !== expect.params.b || avgdl !== expect.avgdl) {
        throw corrupt(`was made for k1 ${k1}, b ${b}, avgdl ${avgdl}, not this index's`);
      }
      const lists = header.readDoubleLE(40);
      const dirOffset = header.readDoubleLE(56);
      const dir = Buffer.alloc(lists * 16 + 8);
      if (preadFully(this.fd, dir, dir.length, dirOffset) < dir.length) throw corrupt('is truncated');
      const copy = new Float64Array(dir.buffer.slice(dir.byteOffset, dir.byteOffset + dir.length));
      this.offsets = copy.subarray(0, lists);
      this.firsts = copy.subarray(lists);
    } catch (err) {
      closeSync(this.fd);
      throw err;
    }
  }

  /** The blocks of the list at `offset` in the postings file, into `into`; false if the list has none. */
  read(offset: number, into: ListBlocks): boolean {
    const offsets = this.offsets;
    let lo = 0;
    let hi = offsets.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = offsets[mid] as number;
      if (v < offset) lo = mid + 1;
      else if (v > offset) hi = mid - 1;
      else {
        const first = this.firsts[mid] as number;
        const count = (this.firsts[mid + 1] as number) - first;
        this.load(first, count, into);
        return true;
      }
    }
    return false;
  }

  get lists(): number {
    return this.offsets.length;
  }

  close(): void {
    closeSync(this.fd);
  }

  private load(first: number, count: number, into: ListBlocks): void {
    const bytes = count * ROW_BYTES;
    if (bytes > this.buf.length) this.buf = new Uint8Array(Math.max(bytes, this.buf.length * 2));
    if (preadFully(this.fd, this.buf, bytes, HEADER_BYTES + first * ROW_BYTES) < bytes) {
      throw new RetrieverError(
        'INDEX_CORRUPT',
        `${this.path} is truncated: rebuild the index (manifest.json's rebuild_command)`,
      );
    }
    if (into.lastDoc.length < count) {
      let size = into.lastDoc.length * 2;
      while (size < count) size *= 2;
      into.lastDoc = new Uint32Array(size);
      into.endByte = new Uint32Array(size);
      into.bestTf = new Uint32Array(size);
      into.bestNorm = new Uint32Array(size);
    }
    // the rows are little-endian, as is every platform Node ships for
    const words = new Uint32Array(this.buf.buffer, 0, count * 4);
    for (let i = 0, w = 0; i < count; i++, w += 4) {
      into.lastDoc[i] = words[w] as number;
      into.endByte[i] = words[w + 1] as number;
      into.bestTf[i] = words[w + 2] as number;
      into.bestNorm[i] = words[w + 3] as number;
    }
    into.count = count;
  }
}

/**
 * The lists long enough to need blocks, noted from the term dictionary as the
 * build writes it (in postings order) so the block pass needs no second read
 * of the dictionary.
 */
export class LongLists implements Iterable<BlockListEntry> {
  private readonly offsets: number[] = [];
  private readonly sizes: number[] = [];
  private readonly dfs: number[] = [];

  *tap<T extends BlockListEntry>(entries: Iterable<T>): Generator<T> {
    for (const e of entries) {
      if (e.df > BLOCK_SIZE) {
        this.offsets.push(e.offset);
        this.sizes.push(e.nbytes);
        this.dfs.push(e.df);
      }
      yield e;
    }
  }

  get count(): number {
    return this.offsets.length;
  }

  *[Symbol.iterator](): Iterator<BlockListEntry> {
    for (let i = 0; i < this.offsets.length; i++) {
      yield { offset: this.offsets[i] as number, nbytes: this.sizes[i] as number, df: this.dfs[i] as number };
    }
  }
}

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RetrieverError } from '../../errors.js';
import { builtFileUrl } from '../../util/built-file.js';

/** The WebAssembly API this file uses (lib ES2023 and @types/node 20 do not declare it). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => { exports: unknown };
}
type WasmModule = { readonly wasmModule: unique symbol };
const wasm: WasmApi = Reflect.get(globalThis, 'WebAssembly');

/** The exports of dist/wasm/ivf-kernels.wasm (source: src/index/dense/wasm/ivf-kernels.ts). */
interface KernelExports {
  memory: { readonly buffer: ArrayBuffer; grow(pages: number): number };
  heapBase(): number;
  scanBlocks(codes: number, blocks: number, pairs: number, lut: number, out: number): void;
  rotate(x: number, n: number, dim: number, window: number, rounds: number, signs: number): void;
  encode(x: number, n: number, dim: number, codes: number, sums: number): void;
  nearest(
    q: number,
    n: number,
    c: number,
    k: number,
    dim: number,
    bias: number,
    first: number,
    out: number,
    score: number,
  ): void;
  dots(q: number, n: number, c: number, k: number, dim: number, bias: number, out: number): void;
  residuals(q: number, lists: number, count: number, means: number, dim: number, out: number, dots: number): void;
  tables(qr: number, dim: number, lut: number, lows: number, out: number): void;
  estimate(
    sums: number,
    n: number,
    factors: number,
    along: number,
    delta: number,
    base: number,
    qsum: number,
    cq: number,
    floor: number,
    keep: number,
    est: number,
  ): number;
  nearestTwo(
    q: number,
    n: number,
    c: number,
    k: number,
    dim: number,
    bias: number,
    first: number,
    out: number,
    score: number,
  ): void;
}

/** Candidate centroids held in the kernels' memory: rows, and their biases (−‖c‖²/2). */
export interface Resident {
  at: number;
  biasAt: number;
  count: number;
}

let compiled: WasmModule | undefined;

function kernelModule(): WasmModule {
  if (compiled) return compiled;
  const path = fileURLToPath(builtFileUrl('../../../wasm/ivf-kernels.wasm', import.meta.url));
  if (!existsSync(path)) {
    throw new RetrieverError(
      'INTERNAL',
      `the IVF kernels ${path} are missing: this install was not built; run \`npm run build\` in the package directory`,
    );
  }
  compiled = new wasm.Module(readFileSync(path));
  return compiled;
}

const PAGE = 65536;
const ALIGN = 64;
const align = (n: number): number => Math.ceil(n / ALIGN) * ALIGN;

/**
 * One thread's instance of the IVF index's SIMD loops, with its memory laid out
 * as: the rotation's signs, the query tables, the scan's sums, then a work area
 * that grows as asked (a list's payload, a batch of rows). Views into the
 * memory are made afresh after each growth (growing detaches the old ones).
 */
export class IvfKernels {
  private readonly x: KernelExports;
  private readonly signs: number;
  readonly lutAt: number;
  private readonly sumsAt: number;
  private readonly keepAt: number;
  private readonly estAt: number;
  /** `tables`' input (dim floats), scratch (dim/4 f64) and output (3 f64). */
  private readonly tableInAt: number;
  private readonly tableLowsAt: number;
  private readonly tableOutAt: number;
  private sumsBlocks: number;
  private workAt: number;
  private workBytes = 0;

  constructor(
    readonly dim: number,
    readonly window: number,
    readonly rounds: number,
    signs: Float32Array,
    maxBlocks: number,
  ) {
    this.x = new wasm.Instance(kernelModule(), { env: { abort: () => undefined } }).exports as KernelExports;
    const pairs = dim / 8;
    this.signs = align(this.x.heapBase());
    this.lutAt = align(this.signs + rounds * dim * 4);
    this.sumsAt = align(this.lutAt + pairs * 32);
    this.sumsBlocks = maxBlocks;
    this.keepAt = align(this.sumsAt + maxBlocks * 32);
    this.estAt = align(this.keepAt + maxBlocks * 16 * 4);
    this.tableInAt = align(this.estAt + maxBlocks * 16 * 8);
    this.tableLowsAt = align(this.tableInAt + dim * 4);
    this.tableOutAt = align(this.tableLowsAt + (dim / 4) * 8);
    this.workAt = align(this.tableOutAt + 3 * 8);
    this.ensure(this.workAt);
    new Float32Array(this.x.memory.buffer, this.signs, rounds * dim).set(signs);
  }

  /**
   * Places centroid rows (dim floats each) in the kernels' memory for good, before the work area,
   * with their L2 biases. Call before any work is done (the work area moves past them).
   */
  resident(rows: Float32Array): Resident {
    const count = rows.length / this.dim;
    const at = this.hold(rows.byteLength);
    const biasAt = this.hold(count * 4);
    const buf = this.x.memory.buffer;
    new Float32Array(buf, at, rows.length).set(rows);
    const bias = new Float32Array(buf, biasAt, count);
    for (let j = 0; j < count; j++) {
      let s = 0;
      for (let d = 0; d < this.dim; d++) s += (rows[j * this.dim + d] as number) ** 2;
      bias[j] = -s / 2;
    }
    return { at, biasAt, count };
  }

  /**
   * For each row of `rows`, its nearest (by L2) among resident rows [from, from + count) of `r`,
   * where it is nearer than what `best`/`score` hold (start them at 0/−∞): `best` gets the row's
   * index in `r`, `score` q·c − ‖c‖²/2.
   */
  nearestResident(
    rows: Float32Array,
    r: Resident,
    from: number,
    count: number,
    best: Uint32Array,
    score: Float32Array,
  ): void {
    const n = rows.length / this.dim;
    const rowsAt = 0;
    const outAt = align(rows.byteLength);
    const scoreAt = align(outAt + n * 4);
    this.reserveWork(scoreAt + n * 4);
    const buf = this.x.memory.buffer;
    new Float32Array(buf, this.workAt + rowsAt, rows.length).set(rows);
    new Uint32Array(buf, this.workAt + outAt, n).set(best);
    new Float32Array(buf, this.workAt + scoreAt, n).set(score);
    this.x.nearest(
      this.workAt + rowsAt,
      n,
      r.at + from * this.dim * 4,
      count,
      this.dim,
      r.biasAt + from * 4,
      from,
      this.workAt + outAt,
      this.workAt + scoreAt,
    );
    best.set(new Uint32Array(buf, this.workAt + outAt, n));
    score.set(new Float32Array(buf, this.workAt + scoreAt, n));
  }

  /** The two nearest of resident rows [from, from + count) to each row: indices in `r`, best first, two a row. */
  nearestTwoResident(rows: Float32Array, r: Resident, from: number, count: number): Uint32Array {
    const n = rows.length / this.dim;
    const outAt = align(rows.byteLength);
    const scoreAt = align(outAt + n * 8);
    this.reserveWork(scoreAt + n * 8);
    const buf = this.x.memory.buffer;
    new Float32Array(buf, this.workAt, rows.length).set(rows);
    this.x.nearestTwo(
      this.workAt,
      n,
      r.at + from * this.dim * 4,
      count,
      this.dim,
      r.biasAt + from * 4,
      from,
      this.workAt + outAt,
      this.workAt + scoreAt,
    );
    return new Uint32Array(buf, this.workAt + outAt, n * 2).slice();
  }

  /**
   * Every row's score against resident rows [from, from + count), row-major (n × count): q·c −
   * ‖c‖²/2 (the nearest by L2 first), or with `innerProduct` q·c alone.
   */
  scoresResident(rows: Float32Array, r: Resident, from: number, count: number, innerProduct = false): Float32Array {
    const n = rows.length / this.dim;
    const outAt = align(rows.byteLength);
    this.reserveWork(outAt + n * count * 4);
    const buf = this.x.memory.buffer;
    new Float32Array(buf, this.workAt, rows.length).set(rows);
    const bias = innerProduct ? 0 : r.biasAt + from * 4;
    this.x.dots(this.workAt, n, r.at + from * this.dim * 4, count, this.dim, bias, this.workAt + outAt);
    return new Float32Array(buf, this.workAt + outAt, n * count).slice();
  }

  /**
   * Nearest of free (non-resident) centroids, for k-means whose means change each iteration: the
   * labels and scores of `rows` against `centroids`.
   */
  nearestOf(rows: Float32Array, centroids: Float32Array, best: Uint32Array, score: Float32Array): void {
    const n = rows.length / this.dim;
    const k = centroids.length / this.dim;
    const cAt = 0;
    const biasAt = align(centroids.byteLength);
    const rowsAt = align(biasAt + k * 4);
    const outAt = align(rowsAt + rows.byteLength);
    const scoreAt = align(outAt + n * 4);
    this.reserveWork(scoreAt + n * 4);
    const buf = this.x.memory.buffer;
    new Float32Array(buf, this.workAt + cAt, centroids.length).set(centroids);
    const bias = new Float32Array(buf, this.workAt + biasAt, k);
    for (let j = 0; j < k; j++) {
      let s = 0;
      for (let d = 0; d < this.dim; d++) s += (centroids[j * this.dim + d] as number) ** 2;
      bias[j] = -s / 2;
    }
    new Float32Array(buf, this.workAt + rowsAt, rows.length).set(rows);
    new Uint32Array(buf, this.workAt + outAt, n).fill(0);
    new Float32Array(buf, this.workAt + scoreAt, n).fill(-Infinity);
    this.x.nearest(
      this.workAt + rowsAt,
      n,
      this.workAt + cAt,
      k,
      this.dim,
      this.workAt + biasAt,
      0,
      this.workAt + outAt,
      this.workAt + scoreAt,
    );
    best.set(new Uint32Array(buf, this.workAt + outAt, n));
    score.set(new Float32Array(buf, this.workAt + scoreAt, n));
  }

  /** A view of `bytes` of the work area (valid until the next call that may grow memory). */
  work(bytes: number): Uint8Array {
    this.reserveWork(bytes);
    return new Uint8Array(this.x.memory.buffer, this.workAt, bytes);
  }

  /** Rotates `n` rows of `dim` floats (row-major in `rows`, which gets the result). */
  rotate(rows: Float32Array): void {
    const n = rows.length / this.dim;
    this.reserveWork(rows.byteLength);
    new Float32Array(this.x.memory.buffer, this.workAt, rows.length).set(rows);
    this.x.rotate(this.workAt, n, this.dim, this.window, this.rounds, this.signs);
    rows.set(new Float32Array(this.x.memory.buffer, this.workAt, rows.length));
  }

  /** Rotates and encodes `n` rows: their sign bits (dim/8 bytes each) and their sums of magnitudes. */
  rotateEncode(rows: Float32Array): { codes: Uint8Array; sums: Float32Array } {
    const n = rows.length / this.dim;
    const codeBytes = n * (this.dim / 8);
    const codesAt = align(rows.byteLength);
    const sumsAt = align(codesAt + codeBytes);
    this.reserveWork(sumsAt + n * 4);
    new Float32Array(this.x.memory.buffer, this.workAt, rows.length).set(rows);
    this.x.rotate(this.workAt, n, this.dim, this.window, this.rounds, this.signs);
    this.x.encode(this.workAt, n, this.dim, this.workAt + codesAt, this.workAt + sumsAt);
    const buf = this.x.memory.buffer;
    return {
      codes: new Uint8Array(buf, this.workAt + codesAt, codeBytes).slice(),
      sums: new Float32Array(buf, this.workAt + sumsAt, n).slice(),
    };
  }

  /** The query tables, as `setLut` fills them: pairs × 32 bytes. */
  lut(): Uint8Array {
    return new Uint8Array(this.x.memory.buffer, this.lutAt, (this.dim / 8) * 32);
  }

  /**
   * For a query (dim floats) and the lists whose means are resident rows at `meansAt`: <c, q>
   * for each, and (`residuals`) each list's residual q − c, rotated (row j for list j; empty
   * without).
   */
  listsOfQuery(
    query: Float32Array,
    lists: Uint32Array,
    meansAt: number,
    residuals: boolean,
  ): { rotated: Float32Array; dots: Float64Array } {
    const n = lists.length;
    const listsAt = align(query.byteLength);
    const outAt = align(listsAt + n * 4);
    const dotsAt = align(outAt + n * this.dim * 4);
    this.reserveWork(dotsAt + n * 8);
    const buf = this.x.memory.buffer;
    new Float32Array(buf, this.workAt, this.dim).set(query);
    new Uint32Array(buf, this.workAt + listsAt, n).set(lists);
    this.x.residuals(
      this.workAt,
      this.workAt + listsAt,
      n,
      meansAt,
      this.dim,
      this.workAt + outAt,
      this.workAt + dotsAt,
    );
    if (residuals) this.x.rotate(this.workAt + outAt, n, this.dim, this.window, this.rounds, this.signs);
    return {
      rotated: residuals ? new Float32Array(buf, this.workAt + outAt, n * this.dim).slice() : new Float32Array(0),
      dots: new Float64Array(buf, this.workAt + dotsAt, n).slice(),
    };
  }

  /**
   * Fills the query tables (`lut`) from a rotated query or residual `qr` (dim floats): a scan's
   * sum s then gives Σ_{bits set} qrᵢ ≈ delta·s + base; qsum is Σ qrᵢ.
   */
  tables(qr: Float32Array): { delta: number; base: number; qsum: number } {
    const buf = this.x.memory.buffer;
    new Float32Array(buf, this.tableInAt, this.dim).set(qr);
    this.x.tables(this.tableInAt, this.dim, this.lutAt, this.tableLowsAt, this.tableOutAt);
    const t = new Float64Array(buf, this.tableOutAt, 3);
    return { delta: t[0] as number, base: t[1] as number, qsum: t[2] as number };
  }

  /** The address of the work area (what `work` views), where a list read from disk is scanned. */
  get workAddress(): number {
    return this.workAt;
  }

  /**
   * Bytes held in the kernels' memory for good, before the work area (a list payload kept in
   * memory, say): their address. Call before any work is done, as `resident`.
   */
  hold(bytes: number): number {
    const at = this.workAt;
    // grown first: where the memory cannot grow (past 4 GB, or none left), nothing changes
    this.ensure(align(at + bytes));
    this.workAt = align(at + bytes);
    this.workBytes = 0;
    return at;
  }

  /** A view of `bytes` held at `at` (valid until the next call that may grow memory). */
  held(at: number, bytes: number): Uint8Array {
    return new Uint8Array(this.x.memory.buffer, at, bytes);
  }

  /**
   * The table sums of `blocks` blocks of codes at address `codesAt` (`workAddress`, or what
   * `hold` gave): one u16 per vector, in block order.
   */
  scan(codesAt: number, blocks: number): Uint16Array {
    if (blocks > this.sumsBlocks) throw new RangeError(`${blocks} blocks exceed the scan's ${this.sumsBlocks}`);
    this.x.scanBlocks(codesAt, blocks, this.dim / 8, this.lutAt, this.sumsAt);
    return new Uint16Array(this.x.memory.buffer, this.sumsAt, blocks * 16);
  }

  /**
   * After `scan` of a list of `n` vectors: the indices (in the list) whose estimate
   * cq + along[i] + factor[i]·(2·(delta·sum[i] + base) − qsum) reaches `floor`, and those
   * estimates. `factorsAt` and `alongAt` are addresses of the list's f32 columns (`alongAt` 0
   * for none). The views are valid until the next call.
   */
  estimate(
    n: number,
    factorsAt: number,
    alongAt: number,
    t: { delta: number; base: number; qsum: number; cq: number; floor: number },
  ): { keep: Uint32Array; est: Float64Array } {
    if (n > this.sumsBlocks * 16) throw new RangeError(`${n} vectors exceed the scan's ${this.sumsBlocks * 16}`);
    const kept = this.x.estimate(
      this.sumsAt,
      n,
      factorsAt,
      alongAt,
      t.delta,
      t.base,
      t.qsum,
      t.cq,
      t.floor,
      this.keepAt,
      this.estAt,
    );
    const buf = this.x.memory.buffer;
    return { keep: new Uint32Array(buf, this.keepAt, kept), est: new Float64Array(buf, this.estAt, kept) };
  }

  private reserveWork(bytes: number): void {
    if (bytes <= this.workBytes) return;
    this.ensure(this.workAt + bytes);
    this.workBytes = bytes;
  }

  private ensure(end: number): void {
    const have = this.x.memory.buffer.byteLength;
    if (end <= have) return;
    if (end > 4 * 2 ** 30 - PAGE) {
      throw new RetrieverError('INTERNAL', `the IVF kernels would need ${end} bytes, past WebAssembly's 4 GB`);
    }
    this.x.memory.grow(Math.ceil((end - have) / PAGE));
  }
}

// AssemblyScript, compiled to dist/wasm/ivf-kernels.wasm by `npm run build`
// (not by tsc: this file is excluded from tsconfig.json, eslint and prettier).
//
// The inner loops of the IVF index (src/index/dense/ivf-kernels.ts wraps them) in
// WebAssembly SIMD:
// - scanBlocks: the sums a query's 4-bit tables give a list's 1-bit codes, 16
//   vectors at a time, by table lookups (i8x16.swizzle), as FAISS's and RaBitQ's
//   "fast scan" do with pshufb;
// - rotate: the index's random rotation of a batch of vectors: rounds of sign
//   flips and Walsh-Hadamard transforms over two overlapping windows;
// - encode: the sign bits of rotated rows, and the sum of their magnitudes.
// Memory is raw: the TypeScript side places inputs at offsets of its choosing
// (from `heapBase()` on) and reads outputs back; nothing is allocated here.

export function heapBase(): usize {
  return __heap_base;
}

/**
 * For `blocks` blocks of 16 codes: codes hold, per block, `pairs` rows of 16
 * bytes (byte j of row p is vector j's code byte p: dims 8p..8p+3 in its low
 * nibble, 8p+4..8p+7 in its high one); `lut` holds, per row, the two 16-entry
 * tables of those nibbles (entries ≤ 127, so two add up within a byte); `out`
 * gets each vector's sum as a u16, block after block.
 */
export function scanBlocks(codes: usize, blocks: u32, pairs: u32, lut: usize, out: usize): void {
  const low = i8x16.splat(0x0f);
  const stride = <usize>pairs * 16;
  let b: u32 = 0;
  // Each row's 16 byte sums are added as eight u16 lanes, even byte + 256·odd byte, and the odd
  // bytes alone (a shift right by 8) to a second sum: the even sums are the first less 256 times
  // the second, modulo 2^16 (FAISS's accumulation), which saves widening every row twice.
  // Two blocks a pass: each table is loaded once for both.
  for (; b + 1 < blocks; b += 2) {
    let a = i16x8.splat(0);
    let ao = i16x8.splat(0);
    let z = i16x8.splat(0);
    let zo = i16x8.splat(0);
    let c = codes + <usize>b * stride;
    let t = lut;
    for (let p: u32 = 0; p < pairs; p++) {
      const tl = v128.load(t);
      const th = v128.load(t, 16);
      const v = v128.load(c);
      const w = v128.load(c + stride);
      const s = i8x16.add(i8x16.swizzle(tl, v128.and(v, low)), i8x16.swizzle(th, v128.and(i16x8.shr_u(v, 4), low)));
      const y = i8x16.add(i8x16.swizzle(tl, v128.and(w, low)), i8x16.swizzle(th, v128.and(i16x8.shr_u(w, 4), low)));
      a = i16x8.add(a, s);
      ao = i16x8.add(ao, i16x8.shr_u(s, 8));
      z = i16x8.add(z, y);
      zo = i16x8.add(zo, i16x8.shr_u(y, 8));
      c += 16;
      t += 32;
    }
    storeSums(out + <usize>b * 32, a, ao);
    storeSums(out + <usize>b * 32 + 32, z, zo);
  }
  for (; b < blocks; b++) {
    let a = i16x8.splat(0);
    let ao = i16x8.splat(0);
    let c = codes + <usize>b * stride;
    let t = lut;
    for (let p: u32 = 0; p < pairs; p++) {
      const v = v128.load(c);
      const s = i8x16.add(
        i8x16.swizzle(v128.load(t), v128.and(v, low)),
        i8x16.swizzle(v128.load(t, 16), v128.and(i16x8.shr_u(v, 4), low)),
      );
      a = i16x8.add(a, s);
      ao = i16x8.add(ao, i16x8.shr_u(s, 8));
      c += 16;
      t += 32;
    }
    storeSums(out + <usize>b * 32, a, ao);
  }
}

/** A block's 16 sums in vector order from `mixed` (even + 256·odd, as u16) and `odd`. */
// @ts-ignore: decorator
@inline
function storeSums(o: usize, mixed: v128, odd: v128): void {
  const even = i16x8.sub(mixed, i16x8.shl(odd, 8));
  v128.store(o, v128.shuffle<i16>(even, odd, 0, 8, 1, 9, 2, 10, 3, 11));
  v128.store(o, v128.shuffle<i16>(even, odd, 4, 12, 5, 13, 6, 14, 7, 15), 16);
}

/** An in-place Walsh-Hadamard transform of `n` floats at `p` (n a power of two, ≥ 8), scaled by 1/sqrt(n). */
function hadamard(p: usize, n: u32): void {
  for (let i: u32 = 0; i < n; i += 4) {
    const q = p + <usize>i * 4;
    const a0 = load<f32>(q);
    const a1 = load<f32>(q, 4);
    const a2 = load<f32>(q, 8);
    const a3 = load<f32>(q, 12);
    const b0 = a0 + a1;
    const b1 = a0 - a1;
    const b2 = a2 + a3;
    const b3 = a2 - a3;
    store<f32>(q, b0 + b2);
    store<f32>(q, b1 + b3, 4);
    store<f32>(q, b0 - b2, 8);
    store<f32>(q, b1 - b3, 12);
  }
  for (let h: u32 = 4; h < n; h <<= 1) {
    for (let i: u32 = 0; i < n; i += h << 1) {
      for (let j: u32 = i; j < i + h; j += 4) {
        const a = p + <usize>j * 4;
        const b = a + <usize>h * 4;
        const u = v128.load(a);
        const w = v128.load(b);
        v128.store(a, f32x4.add(u, w));
        v128.store(b, f32x4.sub(u, w));
      }
    }
  }
  const scale = f32x4.splat(<f32>(1.0 / Math.sqrt(<f64>n)));
  for (let i: u32 = 0; i < n; i += 4) {
    const q = p + <usize>i * 4;
    v128.store(q, f32x4.mul(v128.load(q), scale));
  }
}

/**
 * Rotates `n` rows of `dim` floats in place (dim a multiple of 8): for each round
 * r, the row times the round's signs (dim floats at signs + r·dim·4), then a
 * Walsh-Hadamard transform of the window [0, w) on even rounds and [dim − w, dim)
 * on odd ones, w the largest power of two ≤ dim. Each step is orthogonal; where
 * dim is not a power of two the two windows overlap, and every coordinate mixes
 * with every other after two rounds.
 */
export function rotate(x: usize, n: u32, dim: u32, window: u32, rounds: u32, signs: usize): void {
  for (let v: u32 = 0; v < n; v++) {
    const row = x + <usize>v * dim * 4;
    for (let r: u32 = 0; r < rounds; r++) {
      const sg = signs + <usize>r * dim * 4;
      for (let i: u32 = 0; i < dim; i += 4) {
        const q = row + <usize>i * 4;
        v128.store(q, f32x4.mul(v128.load(q), v128.load(sg + <usize>i * 4)));
      }
      hadamard(row + <usize>((r & 1) == 0 ? 0 : dim - window) * 4, window);
    }
  }
}

/**
 * The codes of `n` rotated rows of `dim` floats: bit k of byte i is set when
 * coordinate 8i + k is positive (dim / 8 bytes a row, at codes + v·dim/8), and
 * each row's sum of absolute coordinates (f32 at sums + v·4).
 */
export function encode(x: usize, n: u32, dim: u32, codes: usize, sums: usize): void {
  const bytes = dim >> 3;
  for (let v: u32 = 0; v < n; v++) {
    const row = x + <usize>v * dim * 4;
    const code = codes + <usize>v * bytes;
    let abs = f32x4.splat(0);
    for (let i: u32 = 0; i < bytes; i++) {
      const a = v128.load(row + <usize>i * 32);
      const b = v128.load(row + <usize>i * 32, 16);
      abs = f32x4.add(abs, f32x4.add(f32x4.abs(a), f32x4.abs(b)));
      const m = i32x4.bitmask(f32x4.gt(a, f32x4.splat(0))) | (i32x4.bitmask(f32x4.gt(b, f32x4.splat(0))) << 4);
      store<u8>(code + <usize>i, <u8>m);
    }
    store<f32>(
      sums + <usize>v * 4,
      f32x4.extract_lane(abs, 0) + f32x4.extract_lane(abs, 1) + f32x4.extract_lane(abs, 2) + f32x4.extract_lane(abs, 3),
    );
  }
}

@inline
function hsum(a: v128): f32 {
  return f32x4.extract_lane(a, 0) + f32x4.extract_lane(a, 1) + f32x4.extract_lane(a, 2) + f32x4.extract_lane(a, 3);
}

/**
 * For each of `n` rows of `q` (dim floats, dim a multiple of 4), the row of `c` among `k` with the
 * highest q·c + bias (bias: k floats; −‖c‖²/2 makes it the nearest by L2): its index (u32 at
 * out) and that score (f32 at score), written only where it beats what `score` already holds
 * (the caller starts it at −∞, and may call again with other rows of `c`, indices offset by
 * `first`). Two rows of q against four of c at a time: eight sums stay in registers.
 */
export function nearest(q: usize, n: u32, c: usize, k: u32, dim: u32, bias: usize, first: u32, out: usize, score: usize): void {
  const rowBytes = <usize>dim * 4;
  for (let i: u32 = 0; i < n; i += 2) {
    const two = i + 1 < n;
    const q0 = q + <usize>i * rowBytes;
    const q1 = two ? q0 + rowBytes : q0;
    let b0 = load<f32>(score + <usize>i * 4);
    let b1 = two ? load<f32>(score + <usize>(i + 1) * 4) : b0;
    let j0 = load<u32>(out + <usize>i * 4);
    let j1 = two ? load<u32>(out + <usize>(i + 1) * 4) : j0;
    for (let j: u32 = 0; j < k; j += 4) {
      const m = k - j < 4 ? k - j : 4;
      const c0 = c + <usize>j * rowBytes;
      const c1 = m > 1 ? c0 + rowBytes : c0;
      const c2 = m > 2 ? c0 + 2 * rowBytes : c0;
      const c3 = m > 3 ? c0 + 3 * rowBytes : c0;
      let a00 = f32x4.splat(0);
      let a01 = f32x4.splat(0);
      let a02 = f32x4.splat(0);
      let a03 = f32x4.splat(0);
      let a10 = f32x4.splat(0);
      let a11 = f32x4.splat(0);
      let a12 = f32x4.splat(0);
      let a13 = f32x4.splat(0);
      for (let o: usize = 0; o < rowBytes; o += 16) {
        const x0 = v128.load(q0 + o);
        const x1 = v128.load(q1 + o);
        const y0 = v128.load(c0 + o);
        const y1 = v128.load(c1 + o);
        const y2 = v128.load(c2 + o);
        const y3 = v128.load(c3 + o);
        a00 = f32x4.add(a00, f32x4.mul(x0, y0));
        a01 = f32x4.add(a01, f32x4.mul(x0, y1));
        a02 = f32x4.add(a02, f32x4.mul(x0, y2));
        a03 = f32x4.add(a03, f32x4.mul(x0, y3));
        a10 = f32x4.add(a10, f32x4.mul(x1, y0));
        a11 = f32x4.add(a11, f32x4.mul(x1, y1));
        a12 = f32x4.add(a12, f32x4.mul(x1, y2));
        a13 = f32x4.add(a13, f32x4.mul(x1, y3));
      }
      const bb = bias + <usize>j * 4;
      const s0: f32 = hsum(a00) + load<f32>(bb);
      const t0: f32 = hsum(a10) + load<f32>(bb);
      if (s0 > b0) { b0 = s0; j0 = first + j; }
      if (t0 > b1) { b1 = t0; j1 = first + j; }
      if (m > 1) {
        const s1: f32 = hsum(a01) + load<f32>(bb, 4);
        const t1: f32 = hsum(a11) + load<f32>(bb, 4);
        if (s1 > b0) { b0 = s1; j0 = first + j + 1; }
        if (t1 > b1) { b1 = t1; j1 = first + j + 1; }
      }
      if (m > 2) {
        const s2: f32 = hsum(a02) + load<f32>(bb, 8);
        const t2: f32 = hsum(a12) + load<f32>(bb, 8);
        if (s2 > b0) { b0 = s2; j0 = first + j + 2; }
        if (t2 > b1) { b1 = t2; j1 = first + j + 2; }
      }
      if (m > 3) {
        const s3: f32 = hsum(a03) + load<f32>(bb, 12);
        const t3: f32 = hsum(a13) + load<f32>(bb, 12);
        if (s3 > b0) { b0 = s3; j0 = first + j + 3; }
        if (t3 > b1) { b1 = t3; j1 = first + j + 3; }
      }
    }
    store<f32>(score + <usize>i * 4, b0);
    store<u32>(out + <usize>i * 4, j0);
    if (two) {
      store<f32>(score + <usize>(i + 1) * 4, b1);
      store<u32>(out + <usize>(i + 1) * 4, j1);
    }
  }
}

/**
 * out[i·k + j] = q_i · c_j + bias_j for `n` rows of q and `k` of c (dim floats each, dim a
 * multiple of 4); `bias` 0 for none (the inner product alone).
 */
export function dots(q: usize, n: u32, c: usize, k: u32, dim: u32, bias: usize, out: usize): void {
  const rowBytes = <usize>dim * 4;
  for (let i: u32 = 0; i < n; i++) {
    const qi = q + <usize>i * rowBytes;
    for (let j: u32 = 0; j < k; j++) {
      const cj = c + <usize>j * rowBytes;
      let a = f32x4.splat(0);
      let b = f32x4.splat(0);
      let o: usize = 0;
      for (; o + 32 <= rowBytes; o += 32) {
        a = f32x4.add(a, f32x4.mul(v128.load(qi + o), v128.load(cj + o)));
        b = f32x4.add(b, f32x4.mul(v128.load(qi + o, 16), v128.load(cj + o, 16)));
      }
      for (; o < rowBytes; o += 16) a = f32x4.add(a, f32x4.mul(v128.load(qi + o), v128.load(cj + o)));
      const add: f32 = bias ? load<f32>(bias + <usize>j * 4) : 0;
      store<f32>(out + (<usize>i * k + j) * 4, hsum(f32x4.add(a, b)) + add);
    }
  }
}

/**
 * `nearest` for the two best rows of `c` per row of `q`: out holds two u32 and score two f32 per
 * row (best first), written from scratch (indices offset by `first`).
 */
export function nearestTwo(q: usize, n: u32, c: usize, k: u32, dim: u32, bias: usize, first: u32, out: usize, score: usize): void {
  const rowBytes = <usize>dim * 4;
  for (let i: u32 = 0; i < n; i++) {
    const qi = q + <usize>i * rowBytes;
    let s1: f32 = -Infinity;
    let s2: f32 = -Infinity;
    let j1: u32 = 0;
    let j2: u32 = 0;
    for (let j: u32 = 0; j < k; j += 4) {
      const m = k - j < 4 ? k - j : 4;
      const c0 = c + <usize>j * rowBytes;
      const c1 = m > 1 ? c0 + rowBytes : c0;
      const c2 = m > 2 ? c0 + 2 * rowBytes : c0;
      const c3 = m > 3 ? c0 + 3 * rowBytes : c0;
      let a0 = f32x4.splat(0);
      let a1 = f32x4.splat(0);
      let a2 = f32x4.splat(0);
      let a3 = f32x4.splat(0);
      for (let o: usize = 0; o < rowBytes; o += 16) {
        const x = v128.load(qi + o);
        a0 = f32x4.add(a0, f32x4.mul(x, v128.load(c0 + o)));
        a1 = f32x4.add(a1, f32x4.mul(x, v128.load(c1 + o)));
        a2 = f32x4.add(a2, f32x4.mul(x, v128.load(c2 + o)));
        a3 = f32x4.add(a3, f32x4.mul(x, v128.load(c3 + o)));
      }
      const bb = bias + <usize>j * 4;
      for (let t: u32 = 0; t < m; t++) {
        const s: f32 =
          (t == 0 ? hsum(a0) : t == 1 ? hsum(a1) : t == 2 ? hsum(a2) : hsum(a3)) + load<f32>(bb + <usize>t * 4);
        if (s > s1) {
          s2 = s1;
          j2 = j1;
          s1 = s;
          j1 = first + j + t;
        } else if (s > s2) {
          s2 = s;
          j2 = first + j + t;
        }
      }
    }
    store<u32>(out + <usize>i * 8, j1);
    store<u32>(out + <usize>i * 8, j2, 4);
    store<f32>(score + <usize>i * 8, s1);
    store<f32>(score + <usize>i * 8, s2, 4);
  }
}

/**
 * A list's estimates from its scan sums (scanBlocks' `out`), kept where they reach `floor`:
 * est = cq + along[i] + factor[i]·(2·(delta·sum[i] + base) − qsum), in f64 as the TypeScript
 * side computed it (`along` is 0 for a file without <r, c>). Writes the indices kept (u32) to
 * `keep` and their estimates (f64) to `est`; returns how many.
 */
export function estimate(
  sums: usize,
  n: u32,
  factors: usize,
  along: usize,
  delta: f64,
  base: f64,
  qsum: f64,
  cq: f64,
  floor: f64,
  keep: usize,
  est: usize,
): u32 {
  let kept: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const s = delta * <f64>load<u16>(sums + <usize>i * 2) + base;
    const a: f64 = along != 0 ? <f64>load<f32>(along + <usize>i * 4) : 0;
    const e = cq + a + <f64>load<f32>(factors + <usize>i * 4) * (2 * s - qsum);
    if (e >= floor) {
      store<u32>(keep + <usize>kept * 4, i);
      store<f64>(est + <usize>kept * 8, e);
      kept++;
    }
  }
  return kept;
}

/**
 * For a query `q` (dim floats) and `count` lists (u32 at `lists`) whose means are rows of
 * `means`: each list's residual q − c to `out` (row j for list j), and <c, q> (f64) to `dots`.
 */
export function residuals(q: usize, lists: usize, count: u32, means: usize, dim: u32, out: usize, dots: usize): void {
  const rowBytes = <usize>dim * 4;
  for (let j: u32 = 0; j < count; j++) {
    const c = means + <usize>load<u32>(lists + <usize>j * 4) * rowBytes;
    const o = out + <usize>j * rowBytes;
    let s: f64 = 0;
    for (let d: usize = 0; d < rowBytes; d += 4) {
      const x = load<f32>(q + d);
      const m = load<f32>(c + d);
      store<f32>(o + d, x - m);
      s += <f64>m * <f64>x;
    }
    store<f64>(dots + <usize>j * 8, s);
  }
}

/**
 * A query's 4-bit tables for scanBlocks from its rotated vector (or residual) `qr` of `dim`
 * floats: for each four coordinates, the sums of their 16 subsets less the lowest, in steps of
 * one scale for all tables, rounded to 0..127 (u8 at `lut`, 16 per four). `lows` is scratch for
 * dim/4 f64. Writes delta, base and Σ qr (f64) to `out`, so a sum s of a scan gives
 * Σ_{bits set} qrᵢ ≈ delta·s + base.
 */
export function tables(qr: usize, dim: u32, lut: usize, lows: usize, out: usize): void {
  const quads = dim >> 2;
  let range: f64 = 0;
  let qsum: f64 = 0;
  for (let m: u32 = 0; m < quads; m++) {
    const p = qr + <usize>m * 16;
    const a = <f64>load<f32>(p);
    const b = <f64>load<f32>(p, 4);
    const c = <f64>load<f32>(p, 8);
    const d = <f64>load<f32>(p, 12);
    qsum += a + b + c + d;
    const lo = min(a, 0) + min(b, 0) + min(c, 0) + min(d, 0);
    const hi = max(a, 0) + max(b, 0) + max(c, 0) + max(d, 0);
    store<f64>(lows + <usize>m * 8, lo);
    if (hi - lo > range) range = hi - lo;
  }
  const delta: f64 = range > 0 ? range / 127 : 1;
  const inv: f64 = 1 / delta;
  let base: f64 = 0;
  for (let m: u32 = 0; m < quads; m++) {
    const p = qr + <usize>m * 16;
    const lo = load<f64>(lows + <usize>m * 8);
    base += lo;
    const a = <f64>load<f32>(p);
    const b = <f64>load<f32>(p, 4);
    const c = <f64>load<f32>(p, 8);
    const d = <f64>load<f32>(p, 12);
    // bit k of the entry's index takes coordinate k; in steps of delta, rounded: entries 0-3 are
    // z + {0, a, b, a + b}, 4-7 those + c, 8-11 + d, 12-15 + c + d
    const z = <f32>(-lo * inv + 0.5);
    const ai = <f32>(a * inv);
    const bi = <f32>(b * inv);
    let v0 = f32x4.splat(z);
    v0 = f32x4.replace_lane(v0, 1, z + ai);
    v0 = f32x4.replace_lane(v0, 2, z + bi);
    v0 = f32x4.replace_lane(v0, 3, z + ai + bi);
    const v1 = f32x4.add(v0, f32x4.splat(<f32>(c * inv)));
    const dv = f32x4.splat(<f32>(d * inv));
    const w01 = i16x8.narrow_i32x4_s(i32x4.trunc_sat_f32x4_s(v0), i32x4.trunc_sat_f32x4_s(v1));
    const w23 = i16x8.narrow_i32x4_s(
      i32x4.trunc_sat_f32x4_s(f32x4.add(v0, dv)),
      i32x4.trunc_sat_f32x4_s(f32x4.add(v1, dv)),
    );
    v128.store(lut + <usize>m * 16, i8x16.narrow_i16x8_u(w01, w23));
  }
  store<f64>(out, delta);
  store<f64>(out, base, 8);
  store<f64>(out, qsum, 16);
}

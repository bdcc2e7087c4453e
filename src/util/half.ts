/** IEEE 754 binary16 conversions (fp16 model outputs, f16 vector files). */
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float32 → IEEE half, round to nearest even. */
export function floatToHalf(x: number): number {
  f32[0] = x;
  const bits = u32[0] as number;
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rem > mid || (rem === mid && half & 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && half & 1)) half++; // may carry into the exponent, as it should
  return sign | half;
}

/** IEEE half → float, computed (builds the table below). */
function decodeHalf(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

let table: Float32Array | undefined;

/**
 * Every one of the 65,536 halves as a float32 (256 KiB, built once): decoding
 * is one lookup instead of a Math.pow, which made f16 rescoring and import
 * several times slower. Every half is exactly representable in float32.
 */
export function halfTable(): Float32Array {
  if (!table) {
    table = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) table[h] = decodeHalf(h);
  }
  return table;
}

export function halfToFloat(h: number): number {
  return halfTable()[h & 0xffff] as number;
}

/** Decodes `src` into `out` (same length; a new array when omitted). */
export function halvesToFloats(src: Uint16Array, out: Float32Array = new Float32Array(src.length)): Float32Array {
  const t = halfTable();
  for (let i = 0; i < src.length; i++) out[i] = t[src[i] as number] as number;
  return out;
}

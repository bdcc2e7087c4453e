/** IEEE 754 binary16 conversions (fp16 model outputs, f16 vector files). */
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

const DENORM_MAGIC_BITS = ((127 - 15 + (23 - 10) + 1) << 23) >>> 0; // 0.5 as float32
const DENORM_MAGIC = (() => {
  u32[0] = DENORM_MAGIC_BITS;
  return f32[0] as number;
})();

/**
 * float32 → IEEE half over a whole array, without a per-element type pun: the rows
 * are read as their bit patterns and rounded with integer arithmetic
 * (round to nearest even; F. Giesen's float_to_half_fast3_rtne; a scalar
 * reference in test/helpers/half-reference.ts checks it).
 */
export function floatsToHalves(src: Float32Array, out: Uint16Array = new Uint16Array(src.length)): Uint16Array {
  const bits = new Uint32Array(src.buffer, src.byteOffset, src.length);
  for (let i = 0; i < src.length; i++) {
    const raw = bits[i] as number;
    const sign = (raw >>> 16) & 0x8000;
    const f = raw & 0x7fffffff;
    let h: number;
    if (f >= 0x47800000) {
      h = f > 0x7f800000 ? 0x7e00 : 0x7c00; // NaN → quiet NaN; ≥ 65536 and ∞ → ∞
    } else if (f < 0x38800000) {
      // subnormal or zero: adding 0.5 aligns the 10 mantissa bits at the
      // bottom and the FPU's own round-to-nearest-even does the rounding
      f32[0] = Math.abs(src[i] as number) + DENORM_MAGIC;
      h = (u32[0] as number) - DENORM_MAGIC_BITS;
    } else {
      // rebias the exponent, add the rounding bias (+1 when the kept mantissa is odd)
      h = (f - 0x38000000 + 0xfff + ((f >>> 13) & 1)) >>> 13;
    }
    out[i] = h | sign;
  }
  return out;
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

import { describe, expect, it } from 'vitest';
import { floatsToHalves, halfToFloat, halvesToFloats } from '../../../src/util/half.js';
import { floatToHalf } from '../../helpers/half-reference.js';

describe('IEEE half conversions', () => {
  it('decodes known halves', () => {
    expect(halfToFloat(0x3c00)).toBe(1);
    expect(halfToFloat(0xc000)).toBe(-2);
    expect(halfToFloat(0x7bff)).toBe(65504); // largest normal
    expect(halfToFloat(0x0001)).toBe(2 ** -24); // smallest subnormal
    expect(halfToFloat(0x3555)).toBeCloseTo(1 / 3, 3);
    expect(halfToFloat(0x7c00)).toBe(Infinity);
    expect(halfToFloat(0xfc00)).toBe(-Infinity);
    expect(Number.isNaN(halfToFloat(0x7e00))).toBe(true);
    expect(Object.is(halfToFloat(0x8000), -0)).toBe(true);
  });

  it('round-trips every one of the 65,536 halves through float and back', () => {
    const all = new Uint16Array(65536).map((_, i) => i);
    const floats = halvesToFloats(all);
    for (let h = 0; h < 65536; h++) {
      const f = floats[h] as number;
      expect(Object.is(f, halfToFloat(h))).toBe(true);
      if (Number.isNaN(f)) continue;
      if (floatToHalf(f) !== h) expect.fail(`half 0x${h.toString(16)} -> ${f} -> 0x${floatToHalf(f).toString(16)}`);
    }
  });
});

describe('floatsToHalves', () => {
  it('rounds every kind of float exactly as floatToHalf does', () => {
    const values: number[] = [0, -0, 1, -1, 65504, 65519.99, 65520, 65535, 65536, 1e10, Infinity, -Infinity, NaN];
    values.push(2 ** -24, 2 ** -25, 2 ** -25 * 1.0001, 2 ** -14, 2 ** -14 * (1 - 2 ** -11), 1e-30, -3e-8, 6.1e-5);
    // each half, and the midpoints and near-midpoints around it
    const halves = halvesToFloats(new Uint16Array(65536).map((_, i) => i));
    for (let h = 0; h < 0x7c00; h++) {
      const a = halves[h] as number;
      const b = halves[h + 1] as number;
      const mid = (a + b) / 2;
      values.push(a, -a, mid, -mid, mid * (1 + 1e-7), mid * (1 - 1e-7));
    }
    let seed = 3;
    for (let i = 0; i < 200_000; i++) {
      seed = (seed * 48271) % 2147483647;
      values.push((seed / 2147483647 - 0.5) * 2 ** ((seed % 60) - 30));
    }
    const src = Float32Array.from(values);
    const got = floatsToHalves(src);
    for (let i = 0; i < src.length; i++) {
      const want = floatToHalf(src[i] as number);
      if (got[i] !== want) expect.fail(`${src[i]}: 0x${(got[i] as number).toString(16)} != 0x${want.toString(16)}`);
    }
    // a view at an offset reads its own elements
    const view = src.subarray(5, 9);
    expect(Array.from(floatsToHalves(view))).toEqual(Array.from(view, (x) => floatToHalf(x)));
  });
});

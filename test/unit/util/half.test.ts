import { describe, expect, it } from 'vitest';
import { floatToHalf, halfToFloat, halvesToFloats } from '../../../src/util/half.js';

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

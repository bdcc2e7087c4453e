import { describe, expect, it } from 'vitest';
import { ANN_DEFAULTS, defaultExpansionSearch } from '../../../src/index/dense/ann.js';

describe('default efSearch', () => {
  it('is 384 up to 1M chunks and doubles above, where recall at 384 drops below 0.95', () => {
    expect(defaultExpansionSearch(0)).toBe(ANN_DEFAULTS.expansionSearch);
    expect(defaultExpansionSearch(1_000_000)).toBe(384);
    expect(defaultExpansionSearch(1_000_001)).toBe(768);
    expect(defaultExpansionSearch(21_015_324)).toBe(768);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareTerms, prefixKey, sortTermIds } from '../../../src/index/bm25/term-sort.js';

/** Terms like the analyzer's (a–z, digits) and unlike them (punctuation, accents, CJK, astral, lone surrogates). */
const term = fc.oneof(
  fc.stringMatching(/^[a-z0-9]{1,9}$/),
  fc.stringMatching(/^(inter|const|ab)[a-z!#_~é]{0,4}$/),
  fc.string({ minLength: 1, maxLength: 8 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }),
  fc.constantFrom('a', 'a!', 'a#', 'a!z', '!b', '#a', 'z{', 'z|a', 'é', '東京', '😀', '\ud800', '0', '9a', ':'),
);

function keysOf(terms: string[]): Float64Array {
  return Float64Array.from(terms, prefixKey);
}

describe('term sort', () => {
  it('prefix keys never disagree with code-unit order', () => {
    fc.assert(
      fc.property(term, term, (s, t) => {
        if (compareTerms(s, t) < 0) expect(prefixKey(s)).toBeLessThanOrEqual(prefixKey(t));
      }),
      { numRuns: 5000 },
    );
  });

  it('sorts term ids as a comparator sort of their terms does', () => {
    fc.assert(
      fc.property(fc.uniqueArray(term, { maxLength: 300 }), (terms) => {
        const ids = terms.map((_, i) => i).reverse();
        const want = [...ids].sort((a, b) => compareTerms(terms[a] as string, terms[b] as string));
        expect(Array.from(sortTermIds(ids, terms, keysOf(terms)))).toEqual(want);
      }),
      { numRuns: 500 },
    );
  });

  it('orders terms that share a lossy unit by the whole term', () => {
    const terms = ['#a', '!b', 'a#', 'a!z', 'a!', 'ab', 'zz{', 'zz|a'];
    const got = Array.from(sortTermIds([0, 1, 2, 3, 4, 5, 6, 7], terms, keysOf(terms)), (id) => terms[id]);
    expect(got).toEqual(['!b', '#a', 'a!', 'a!z', 'a#', 'ab', 'zz{', 'zz|a']);
  });
});

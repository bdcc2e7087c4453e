import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bertWords,
  countBertWords,
  isBertDroppedChar,
  isBertPunctuation,
  isBertWhitespace,
  isCjkCodePoint,
} from '../../../src/text/bert-pretokenize.js';

const PIECES = [
  'a',
  'Zz',
  'é',
  'e\u0301',
  '中',
  '😀',
  '\ud800',
  '\udc00',
  '\u0000',
  '\u00ad',
  '\u200b',
  ' ',
  '\n',
  '.',
  '$',
  '7',
];

describe('BERT pre-tokenization', () => {
  it('splits words, punctuation, CJK and astral characters; dropped characters do not end a word', () => {
    const text = 'Hi, 中a\u00adb 😀!';
    expect(bertWords(text).map((w) => text.slice(w.start, w.end))).toEqual(['Hi', ',', '中', 'a\u00adb', '😀', '!']);
  });

  it('a lone surrogate does not swallow the character after it', () => {
    expect(bertWords('\ud800.').map((w) => [w.start, w.end])).toEqual([[1, 2]]);
    expect(countBertWords('\ud800.')).toBe(1);
  });

  it('countBertWords counts exactly the words bertWords returns', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 30 }), (parts) => {
        const text = parts.join('');
        expect(countBertWords(text), JSON.stringify(text)).toBe(bertWords(text).length);
      }),
      { numRuns: 2000 },
    );
  });

  it('splits at every code point as the Unicode predicates say, the first time it is seen and after', () => {
    // "x<c>x" is one word when c is a word or dropped character, two around whitespace, three around punctuation
    const expected = (cp: number): number => {
      if (isBertDroppedChar(cp)) return 1;
      if (isBertWhitespace(cp)) return 2;
      if (isBertPunctuation(cp) || isCjkCodePoint(cp)) return 3;
      return 1;
    };
    const codePoint = fc.oneof(
      fc.integer({ min: 0x80, max: 0xd7ff }),
      fc.integer({ min: 0xe000, max: 0xffff }),
      fc.integer({ min: 0x10000, max: 0x10ffff }),
    );
    fc.assert(
      fc.property(codePoint, (cp) => {
        const text = `x${String.fromCodePoint(cp)}x`;
        expect(countBertWords(text), cp.toString(16)).toBe(expected(cp));
        expect(countBertWords(text), cp.toString(16)).toBe(expected(cp));
      }),
      { numRuns: 5000 },
    );
    for (const [ch, n] of [
      ['\u2013', 3],
      ['\u00a0', 2],
      ['\u00e9', 1],
      ['\u4e2d', 3],
      ['\u200b', 1],
    ] as const) {
      expect(countBertWords(`x${ch}x`), ch).toBe(n);
    }
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bertWords, countBertWords } from '../../../src/text/bert-pretokenize.js';

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
});

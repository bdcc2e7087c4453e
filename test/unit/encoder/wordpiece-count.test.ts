import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WordPieceTokenizer } from '../../../src/encoder/wordpiece.js';
import { HAS_SHARED, sharedPath } from '../../helpers/paths.js';

// letters, digits, punctuation, accents (precomposed and combining), CJK,
// an astral emoji, a lone surrogate, dropped controls (NUL, soft hyphen,
// U+FFFD) and several kinds of whitespace
const PIECES = [
  'a',
  'b',
  'z',
  'Q',
  'the',
  'Running',
  'unaffable',
  '7',
  '42',
  '.',
  ',',
  '"',
  "'",
  '-',
  '$',
  '(',
  'é',
  'É',
  'e\u0301',
  'ñ',
  'ß',
  '中',
  '文',
  '😀',
  '\ud800',
  '\u0000',
  '\u00ad',
  '\ufffd',
  '\u200b',
  ' ',
  '  ',
  '\n',
  '\t',
  '\u00a0',
  '\u3000',
];

describe.skipIf(!HAS_SHARED)('WordPiece token counting', () => {
  const tok = HAS_SHARED ? WordPieceTokenizer.fromFile(sharedPath('models/tiny-e5/tokenizer.json')) : undefined;

  it('the cached span path counts exactly what normalizing every word does', () => {
    const t = tok as WordPieceTokenizer;
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }), (parts) => {
        const text = parts.join('');
        const slow = t.countTokensSlow(text);
        expect(t.countTokens(text), JSON.stringify(text)).toBe(slow);
        expect(slow).toBe(t.wordSpans(text).reduce((s, w) => s + w.tokens, 0));
        // and again, now from the cache
        expect(t.countTokens(text)).toBe(slow);
      }),
      { numRuns: 2000 },
    );
  });

  it('counts a real passage as encode() tokenizes it', () => {
    const t = tok as WordPieceTokenizer;
    const text =
      '"Ronnie Rocket"\nRonnie Rocket is an unfinished film project written by David Lynch, who was also due to direct it.';
    expect(t.countTokens(text)).toBe(t.encode(text, 10_000).ids.length - 2);
  });
});

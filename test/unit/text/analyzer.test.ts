import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEnglishAnalyzer, normalizeToken } from '../../../src/text/analyzer.js';
import { hashSpan, scanWords } from '../../../src/text/word-scanner.js';

function words(text: string): string[] {
  const out: string[] = [];
  scanWords(text, (s, e) => out.push(text.slice(s, e)));
  return out;
}

describe('scanWords (UAX#29-style)', () => {
  it('keeps letters, digits and in-word punctuation together', () => {
    expect(words("Don't stop: U.S.A. won 3.14 or 1,000 times, wi-fi e_mail")).toEqual([
      "Don't",
      'stop',
      'U.S.A',
      'won',
      '3.14',
      'or',
      '1,000',
      'times',
      'wi',
      'fi',
      'e_mail',
    ]);
  });

  it('splits Han and Hiragana into single characters and keeps other scripts whole', () => {
    expect(words('東京タワー は 2019 Москва café')).toEqual(['東', '京', 'タワー', 'は', '2019', 'Москва', 'café']);
  });

  it('keeps combining marks inside their word and handles astral characters', () => {
    expect(words('cafe\u0301 𝒜lpha 😀 end')).toEqual(['cafe\u0301', '𝒜lpha', 'end']);
  });

  it('a lone surrogate is one character that joins no word and swallows none', () => {
    expect(words('\ud800abc x\udc00y z\ud800')).toEqual(['abc', 'x', 'y', 'z']);
    expect(words('\ud835\udc9clpha')).toEqual(['\ud835\udc9clpha']);
  });

  it('never emits an empty or out-of-range span', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        scanWords(text, (s, e) => {
          expect(s).toBeGreaterThanOrEqual(0);
          expect(e).toBeGreaterThan(s);
          expect(e).toBeLessThanOrEqual(text.length);
        });
      }),
    );
  });

  it('reports the FNV-1a hash of each word it emits, surrogate pairs and joiners included', () => {
    const units = [
      'a',
      'Z',
      'é',
      '1',
      '.',
      "'",
      ',',
      ':',
      '_',
      ' ',
      '東',
      '\u0301',
      '\ud835\udc9c',
      '\ud83d\ude00',
      '\ud800',
      '-',
    ];
    const text = fc.oneof(
      fc.array(fc.constantFrom(...units), { maxLength: 40 }).map((a) => a.join('')),
      fc.string({ unit: 'binary', maxLength: 80 }),
    );
    fc.assert(
      fc.property(text, (t) => {
        scanWords(t, (s, e, h) => expect(h).toBe(hashSpan(t, s, e)));
      }),
      { numRuns: 2000 },
    );
    // FNV-1a's published offset basis and prime, over UTF-16 code units
    expect(hashSpan('a', 0, 1)).toBe(Math.imul(0x811c9dc5 ^ 0x61, 16777619));
    let seen = 0;
    scanWords("x don't 𝒜b", (s, e, h) => {
      seen++;
      expect(h).toBe(hashSpan("x don't 𝒜b", s, e));
    });
    expect(seen).toBe(3);
  });
});

describe('English analyzer', () => {
  const analyzer = createEnglishAnalyzer();

  it('lowercases, strips possessives, drops Lucene stopwords and Porter-stems', () => {
    // "u.s" loses its final s to Porter's step 1a exactly as in Lucene's PorterStemFilter
    expect(analyzer.analyze("The Runner's shoes were running on the Tracks of the U.S.")).toEqual([
      'runner',
      'shoe',
      'were',
      'run',
      'track',
      'u.',
    ]);
  });

  it('keeps question words that carry meaning', () => {
    expect(analyzer.analyze('Who directed it and when')).toEqual(['who', 'direct', 'when']);
  });

  it('maps inflections of a word to one term at query and index time alike', () => {
    const forms = ['connect', 'connected', 'connecting', 'connection', 'connections', 'Connects'];
    const terms = new Set(forms.map((f) => normalizeToken(f)));
    expect([...terms]).toEqual(['connect']);
  });

  it('is a pure function: the same text always gives the same terms', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        expect(createEnglishAnalyzer().analyze(text)).toEqual(analyzer.analyze(text));
      }),
    );
  });
});

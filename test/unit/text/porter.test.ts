import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { porterStem, porterStemReference } from '../../../src/text/porter.js';

// Examples from Porter (1980) and the reference implementation's vocabulary.
const CASES: Array<[string, string]> = [
  ['caresses', 'caress'],
  ['ponies', 'poni'],
  ['ties', 'ti'],
  ['caress', 'caress'],
  ['cats', 'cat'],
  ['feed', 'feed'],
  ['agreed', 'agre'],
  ['plastered', 'plaster'],
  ['bled', 'bled'],
  ['motoring', 'motor'],
  ['sing', 'sing'],
  ['conflated', 'conflat'],
  ['troubled', 'troubl'],
  ['sized', 'size'],
  ['hopping', 'hop'],
  ['tanned', 'tan'],
  ['falling', 'fall'],
  ['hissing', 'hiss'],
  ['fizzed', 'fizz'],
  ['failing', 'fail'],
  ['filing', 'file'],
  ['happy', 'happi'],
  ['sky', 'sky'],
  ['relational', 'relat'],
  ['conditional', 'condit'],
  ['rational', 'ration'],
  ['valenci', 'valenc'],
  ['hesitanci', 'hesit'],
  ['digitizer', 'digit'],
  ['conformabli', 'conform'],
  ['radicalli', 'radic'],
  ['differentli', 'differ'],
  ['vileli', 'vile'],
  ['analogousli', 'analog'],
  ['vietnamization', 'vietnam'],
  ['predication', 'predic'],
  ['operator', 'oper'],
  ['feudalism', 'feudal'],
  ['decisiveness', 'decis'],
  ['hopefulness', 'hope'],
  ['callousness', 'callous'],
  ['formaliti', 'formal'],
  ['sensitiviti', 'sensit'],
  ['sensibiliti', 'sensibl'],
  ['triplicate', 'triplic'],
  ['formative', 'form'],
  ['formalize', 'formal'],
  ['electriciti', 'electr'],
  ['electrical', 'electr'],
  ['hopeful', 'hope'],
  ['goodness', 'good'],
  ['revival', 'reviv'],
  ['allowance', 'allow'],
  ['inference', 'infer'],
  ['airliner', 'airlin'],
  ['gyroscopic', 'gyroscop'],
  ['adjustable', 'adjust'],
  ['defensible', 'defens'],
  ['irritant', 'irrit'],
  ['replacement', 'replac'],
  ['adjustment', 'adjust'],
  ['dependent', 'depend'],
  ['adoption', 'adopt'],
  ['homologou', 'homolog'],
  ['communism', 'commun'],
  ['activate', 'activ'],
  ['angulariti', 'angular'],
  ['homologous', 'homolog'],
  ['effective', 'effect'],
  ['bowdlerize', 'bowdler'],
  ['probate', 'probat'],
  ['rate', 'rate'],
  ['cease', 'ceas'],
  ['controll', 'control'],
  ['roll', 'roll'],
  ['generalizations', 'gener'],
  ['oscillators', 'oscil'],
  ['running', 'run'],
  ['runs', 'run'],
  ['archaeology', 'archaeolog'],
  ['by', 'by'],
  ['is', 'is'],
];

describe('porterStem', () => {
  it.each(CASES)('%s → %s', (word, stem) => {
    expect(porterStem(word)).toBe(stem);
  });

  it('leaves words of one or two letters alone', () => {
    expect(porterStem('as')).toBe('as');
    expect(porterStem('y')).toBe('y');
  });

  it('treats non-ASCII letters as consonants without throwing', () => {
    expect(porterStem('żuławski')).toBe('żuławski');
    expect(porterStem('cafés')).toBe('café');
  });

  it('counts a word with an astral letter in code points, as the reference does', () => {
    // in code units the doubled 𝐀 would not be a double consonant, and "ed" would leave "a𝐀𝐀"
    expect(porterStem('a𝐀𝐀ed')).toBe('a𝐀');
    expect(porterStem('a𝐀𝐀ed')).toBe(porterStemReference('a𝐀𝐀ed'));
  });

  it('agrees with the reference transcription on every word', () => {
    // letters the rules look at (vowels, y, the suffixes' letters, the double-consonant exceptions), a few others
    const letter = fc.constantFrom(...'aeiouyyslltteeiinnggbbzzrcmpvkwx', 'é', 'ß', '1', "'", '𝐀');
    const word = fc.array(letter, { minLength: 1, maxLength: 16 }).map((cs) => cs.join(''));
    const suffixed = fc
      .tuple(word, fc.constantFrom('ational', 'ization', 'iveness', 'ement', 'ing', 'ed', 'eed', 'ies', 'sses', 'ly'))
      .map(([w, s]) => w + s);
    fc.assert(
      fc.property(fc.oneof(word, suffixed), (w) => {
        expect(porterStem(w)).toBe(porterStemReference(w));
      }),
      { numRuns: 20_000 },
    );
  });
});

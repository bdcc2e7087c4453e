import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkDocument, formatContents, wordCounter } from '../../../src/ingest/chunker.js';
import { type TokenCounter } from '../../../src/core/contracts.js';
import { splitSentences } from '../../../src/ingest/sentences.js';

const count = (counter: TokenCounter, text: string): number => counter.words(text).reduce((s, w) => s + w.tokens, 0);

function sentence(i: number, words: number): string {
  return `Sentence ${i} ${Array.from({ length: words - 3 }, (_, j) => `w${i}x${j}`).join(' ')} end.`;
}

describe('splitSentences', () => {
  it('splits at terminators and newlines but not after abbreviations or initials', () => {
    const text = 'Dr. Smith met J. R. Tolkien in the U.S. on Monday. It rained! Did it?\nNew line here';
    const parts = splitSentences(text).map(([s, e]) => text.slice(s, e).trim());
    expect(parts).toEqual([
      'Dr. Smith met J. R. Tolkien in the U.S. on Monday.',
      'It rained!',
      'Did it?',
      'New line here',
    ]);
  });

  it('tiles the text exactly', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (text) => {
        const spans = splitSentences(text);
        expect(spans.map(([s, e]) => text.slice(s, e)).join('')).toBe(text);
      }),
    );
  });
});

describe('chunkDocument', () => {
  it('keeps a document whole when size is 0 and uses the verbatim contents when given', () => {
    const [piece] = chunkDocument(
      { id: '1', title: 'T', text: 'body', verbatim: { contents: '"T"\nbody', bodyStart: 4 } },
      { size: 0, overlap: 0, counter: wordCounter },
    );
    expect(piece).toEqual({
      position: 0,
      contents: '"T"\nbody',
      bodyStart: 4,
      nTokens: count(wordCounter, '"T"\nbody'),
    });
  });

  it('counts unsplit chunks in words, whatever the splitting counter (no budget to keep)', () => {
    // our own counter, far from a word count: one token per character
    const perChar: TokenCounter = {
      id: 'chars',
      words: (t) => wordCounter.words(t).map((w) => ({ ...w, tokens: w.end - w.start })),
      count: (t) => t.length,
    };
    const doc = {
      id: '1',
      title: 'T',
      text: 'a body of words',
      verbatim: { contents: '"T"\na body of words', bodyStart: 4 },
    };
    const [verbatim] = chunkDocument(doc, { size: 100, overlap: 0, counter: perChar });
    expect(verbatim?.nTokens).toBe(count(wordCounter, '"T"\na body of words'));
    const [whole] = chunkDocument(
      { id: '2', title: 'T', text: 'a body of words' },
      { size: 0, overlap: 0, counter: perChar },
    );
    expect(whole?.nTokens).toBe(count(wordCounter, '"T"\na body of words'));
    // documents that are split still spend the splitting counter's budget
    const [split] = chunkDocument(
      { id: '3', title: 'T', text: 'a body of words' },
      { size: 100, overlap: 0, counter: perChar },
    );
    expect(split?.nTokens).toBeGreaterThan(count(wordCounter, '"T"\na body of words'));
  });

  it('packs whole sentences up to the size, title line included, with sentence overlap', () => {
    const text = Array.from({ length: 12 }, (_, i) => sentence(i, 20)).join(' ');
    const pieces = chunkDocument(
      { id: 'd', title: 'Some Title', text },
      { size: 100, overlap: 25, counter: wordCounter },
    );
    expect(pieces.length).toBeGreaterThan(2);
    for (const p of pieces) {
      expect(p.nTokens).toBeLessThanOrEqual(100);
      expect(p.nTokens).toBe(count(wordCounter, p.contents));
      expect(p.contents.startsWith('"Some Title"\n')).toBe(true);
      const body = p.contents.slice(p.bodyStart);
      expect(body).toMatch(/^Sentence \d+/); // starts at a sentence boundary
      expect(body).toMatch(/end\.$/); // ends at one
    }
    // consecutive chunks share exactly one 20-token sentence (≤ 25 overlap)
    for (let i = 1; i < pieces.length; i++) {
      const prev = (pieces[i - 1] as { contents: string }).contents.split('\n')[1] as string;
      const cur = (pieces[i] as { contents: string }).contents.split('\n')[1] as string;
      const firstSentence = cur.slice(0, cur.indexOf('end.') + 4);
      expect(prev.endsWith(firstSentence)).toBe(true);
    }
  });

  it('cuts a sentence longer than a chunk at word boundaries and still overlaps', () => {
    const text = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
    const pieces = chunkDocument({ id: 'd', title: '', text }, { size: 100, overlap: 20, counter: wordCounter });
    const all = pieces.map((p) => p.contents.split(' '));
    for (const words of all) expect(words.length).toBeLessThanOrEqual(100);
    const covered = new Set(all.flat());
    expect(covered.size).toBe(300);
    for (let i = 1; i < all.length; i++) {
      expect((all[i] as string[])[0]).toBe((all[i - 1] as string[])[(all[i - 1] as string[]).length - 20]);
    }
  });

  it('counts tokens with the given counter (WordPiece-like counters make chunks smaller in words)', () => {
    const twoPerWord: TokenCounter = {
      id: 'double',
      words: (t) => wordCounter.words(t).map((w) => ({ ...w, tokens: 2 })),
      count: (t) => 2 * wordCounter.count(t),
    };
    const text = Array.from({ length: 40 }, (_, i) => sentence(i, 10)).join(' ');
    const single = chunkDocument({ id: 'd', title: '', text }, { size: 100, overlap: 0, counter: wordCounter });
    const double = chunkDocument({ id: 'd', title: '', text }, { size: 100, overlap: 0, counter: twoPerWord });
    expect(double.length).toBeGreaterThanOrEqual(single.length * 2 - 1);
    for (const p of double) expect(p.nTokens).toBeLessThanOrEqual(100);
  });

  it('never loses text and never exceeds the size (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[A-Za-z]{1,8}[.!?]?$/), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 8, max: 80 }),
        fc.integer({ min: 0, max: 7 }),
        (tokens, size, overlap) => {
          const text = tokens.join(' ');
          const pieces = chunkDocument({ id: 'd', title: '', text }, { size, overlap, counter: wordCounter });
          for (const p of pieces) expect(p.nTokens).toBeLessThanOrEqual(size);
          const seen = new Set(
            pieces.flatMap((p) => wordCounter.words(p.contents).map((w) => p.contents.slice(w.start, w.end))),
          );
          for (const w of wordCounter.words(text)) expect(seen.has(text.slice(w.start, w.end))).toBe(true);
          pieces.forEach((p, i) => expect(p.position).toBe(i));
        },
      ),
    );
  });

  it('wordCounter.count agrees with the spans it would produce (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        expect(wordCounter.count(text)).toBe(wordCounter.words(text).length);
      }),
    );
  });

  it('formats contents in the FlashRAG title-line convention', () => {
    expect(formatContents('Title', 'Body')).toEqual({ contents: '"Title"\nBody', bodyStart: 8 });
    expect(formatContents('', 'Body')).toEqual({ contents: 'Body', bodyStart: 0 });
  });
});

import type { TokenCounter } from '../core/contracts.js';
import { bertWords, countBertWords } from '../text/bert-pretokenize.js';
import { splitSentences } from './sentences.js';
import type { SourceDocument } from './types.js';

/** Counts BERT pre-tokens (words and punctuation marks): one token each. */
export const wordCounter: TokenCounter = {
  id: 'words',
  words: (text) => bertWords(text).map((w) => ({ start: w.start, end: w.end, tokens: 1 })),
  count: (text) => countBertWords(text),
};

export interface ChunkerOptions {
  /** Tokens per chunk including the title line; 0 keeps each document whole. */
  size: number;
  /** Tokens repeated from the end of one chunk at the start of the next. */
  overlap: number;
  counter: TokenCounter;
}

export interface ChunkPiece {
  position: number;
  contents: string;
  bodyStart: number;
  nTokens: number;
}

/** The indexed text of a chunk: FlashRAG's `"Title"\nbody` convention. */
export function formatContents(title: string, body: string): { contents: string; bodyStart: number } {
  if (title === '') return { contents: body, bodyStart: 0 };
  const head = `"${title}"\n`;
  return { contents: head + body, bodyStart: head.length };
}

function countTokens(counter: TokenCounter, text: string): number {
  return counter.count(text);
}

/**
 * Splits a document into chunks of at most `size` tokens (title line
 * included, so a chunk fits the encoder window), breaking at sentence
 * boundaries and repeating up to `overlap` tokens of whole sentences.
 * A sentence longer than a chunk is cut at word boundaries into pieces no
 * larger than the overlap, so overlap still holds inside it.
 */
export function chunkDocument(doc: SourceDocument, opts: ChunkerOptions): ChunkPiece[] {
  if (opts.size <= 0 || doc.verbatim) {
    const { contents, bodyStart } = doc.verbatim ?? formatContents(doc.title, doc.text);
    // a verbatim record always yields its chunk: chunk num = line number, as in e5_Flat.index
    if (!doc.verbatim && contents.trim() === '') return [];
    // nothing is split, so no token budget to keep: the count is in words (WordPiece counting
    // was 70% of a wiki-18 ingest)
    return [{ position: 0, contents, bodyStart, nTokens: countTokens(wordCounter, contents) }];
  }
  const titleTokens = doc.title === '' ? 0 : countTokens(opts.counter, `"${doc.title}"`);
  const budget = Math.max(opts.size - titleTokens, Math.ceil(opts.size / 2));
  const overlap = Math.min(Math.max(0, opts.overlap), budget - 1);
  const units = sentenceUnits(doc.text, opts.counter, overlap > 0 ? Math.min(budget, overlap) : budget);
  if (units.length === 0) {
    if (doc.title === '') return [];
    const { contents, bodyStart } = formatContents(doc.title, '');
    return [{ position: 0, contents, bodyStart, nTokens: titleTokens }];
  }

  const pieces: ChunkPiece[] = [];
  let i = 0;
  while (i < units.length) {
    let tokens = 0;
    let j = i;
    while (j < units.length && (j === i || tokens + (units[j] as Unit).tokens <= budget)) {
      tokens += (units[j] as Unit).tokens;
      j++;
    }
    const first = units[i] as Unit;
    const last = units[j - 1] as Unit;
    const body = doc.text.slice(first.start, last.end).trim();
    const { contents, bodyStart } = formatContents(doc.title, body);
    pieces.push({ position: pieces.length, contents, bodyStart, nTokens: tokens + titleTokens });
    if (j >= units.length) break;
    // step back over whole units that fit in the overlap, always moving forward
    let k = j;
    let carried = 0;
    while (k - 1 > i && carried + (units[k - 1] as Unit).tokens <= overlap) {
      k--;
      carried += (units[k] as Unit).tokens;
    }
    i = k;
  }
  return pieces;
}

interface Unit {
  start: number;
  end: number;
  tokens: number;
}

/** Sentences with token counts; sentences above `maxUnit` tokens are cut at words. */
function sentenceUnits(text: string, counter: TokenCounter, maxUnit: number): Unit[] {
  const words = counter.words(text);
  const units: Unit[] = [];
  let w = 0;
  for (const [sStart, sEnd] of splitSentences(text)) {
    let unitStart = -1;
    let unitEnd = sStart;
    let tokens = 0;
    while (w < words.length && (words[w] as { start: number }).start < sEnd) {
      const word = words[w] as { start: number; end: number; tokens: number };
      if (tokens > 0 && tokens + word.tokens > maxUnit) {
        units.push({ start: unitStart, end: unitEnd, tokens });
        unitStart = -1;
        tokens = 0;
      }
      if (unitStart < 0) unitStart = word.start;
      unitEnd = word.end;
      tokens += word.tokens;
      w++;
    }
    if (tokens > 0) units.push({ start: unitStart, end: Math.max(unitEnd, sEnd), tokens });
  }
  return units;
}

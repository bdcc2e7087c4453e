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
  /** A PDF's chunk: the pages its body comes from, as "3" or "3-4". */
  pages?: string;
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
  // cut by the reader (KILT): each passage is a chunk as it is, counted in words
  if (doc.passages) {
    return doc.passages.map((p, position) => ({ position, ...p, nTokens: countTokens(wordCounter, p.contents) }));
  }
  if (opts.size <= 0 || doc.verbatim) {
    const { contents, bodyStart } = doc.verbatim ?? formatContents(doc.title, doc.text);
    // a verbatim record always yields its chunk: chunk num = line number, as in e5_Flat.index
    if (!doc.verbatim && contents.trim() === '') return [];
    // nothing is split, so no token budget to keep: the count is in words (WordPiece counting
    // was 70% of a wiki-18 ingest)
    const whole: ChunkPiece = { position: 0, contents, bodyStart, nTokens: countTokens(wordCounter, contents) };
    const pages = doc.structure?.pages;
    if (pages && doc.text.length > 0) whole.pages = pageRange(pages, 0, doc.text.length);
    return [whole];
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

  const breaks = doc.structure ? breakKinds(doc.text, units, doc.structure.sections) : undefined;
  const pieces: ChunkPiece[] = [];
  let i = 0;
  while (i < units.length) {
    let { j, tokens } = fill(units, i, budget, breaks);
    if (breaks && j < units.length && breaks[j] !== SECTION)
      ({ j, tokens } = backToParagraph(units, i, j, tokens, budget, breaks));
    const first = units[i] as Unit;
    const last = units[j - 1] as Unit;
    const body = doc.text.slice(first.start, last.end).trim();
    const { contents, bodyStart } = formatContents(doc.title, body);
    const piece: ChunkPiece = { position: pieces.length, contents, bodyStart, nTokens: tokens + titleTokens };
    const pages = doc.structure?.pages;
    if (pages) piece.pages = pageRange(pages, first.start, last.end);
    pieces.push(piece);
    if (j >= units.length) break;
    // a chunk that ends at a heading or a paragraph starts the next one afresh: overlap is for
    // text cut mid-paragraph
    if (breaks && breaks[j] !== NONE) {
      i = j;
      continue;
    }
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

const NONE = 0;
const PARAGRAPH = 1;
const SECTION = 2;

/**
 * Units i..j-1 up to the budget (at least one). In a structured document a
 * heading starts a new chunk, unless the chunk so far is small (a quarter of
 * the budget): a heading then stays with the text it heads.
 */
function fill(units: Unit[], i: number, budget: number, breaks: Uint8Array | undefined): { j: number; tokens: number } {
  let tokens = 0;
  let j = i;
  while (j < units.length && (j === i || tokens + (units[j] as Unit).tokens <= budget)) {
    if (breaks && j > i && breaks[j] === SECTION && tokens >= budget / 4) break;
    tokens += (units[j] as Unit).tokens;
    j++;
  }
  return { j, tokens };
}

/** A full chunk ends at its last paragraph break instead, if that keeps half the budget. */
function backToParagraph(
  units: Unit[],
  i: number,
  j: number,
  tokens: number,
  budget: number,
  breaks: Uint8Array,
): { j: number; tokens: number } {
  let t = tokens;
  for (let k = j - 1; k > i; k--) {
    t -= (units[k] as Unit).tokens;
    if (t < budget / 2) break;
    if (breaks[k] !== NONE) return { j: k, tokens: t };
  }
  return { j, tokens };
}

/** For each unit: does a heading (SECTION) or a blank line (PARAGRAPH) come just before it. */
function breakKinds(text: string, units: Unit[], sections: number[]): Uint8Array {
  const kinds = new Uint8Array(units.length);
  let s = 0;
  for (let k = 0; k < units.length; k++) {
    const u = units[k] as Unit;
    const gapStart = k === 0 ? 0 : (units[k - 1] as Unit).end;
    while (s < sections.length && (sections[s] as number) < gapStart) s++;
    if (s < sections.length && (sections[s] as number) <= u.start) kinds[k] = SECTION;
    else if (k > 0 && /\n[ \t]*\n/.test(text.slice(gapStart, u.start))) kinds[k] = PARAGRAPH;
  }
  return kinds;
}

/** The pages text[start, end) spans; pages[p] is where page p + 1 starts. */
function pageRange(pages: number[], start: number, end: number): string {
  const pageOf = (at: number): number => {
    let lo = 0;
    let hi = pages.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((pages[mid] as number) <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  const a = pageOf(start);
  const b = pageOf(Math.max(start, end - 1));
  return a === b ? String(a) : `${a}-${b}`;
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

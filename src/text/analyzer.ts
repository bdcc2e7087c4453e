import { SpanInterner } from './interner.js';
import { porterStem } from './porter.js';
import { ENGLISH_STOPWORDS } from './stopwords.js';
import { scanWords } from './word-scanner.js';

/**
 * The BM25 analyzer. Index time and query time call the very same function,
 * which is the fix for the Python stacks' bug of stemming documents but not
 * queries. Pipeline, as Lucene's EnglishAnalyzer: UAX#29-style words →
 * strip English possessive "'s" → lowercase → drop stopwords → Porter stem.
 */
export interface Analyzer {
  /** Stored in the index manifest; a server refuses an index analysed differently. */
  readonly id: string;
  analyze(text: string): string[];
  /**
   * The first step of `analyze`: each word of `text` it indexes, as UTF-16
   * offsets and the FNV-1a hash of its code units (`scanWords`). Words longer
   * than 255 code units are not reported, as Lucene drops them.
   */
  scanWords(text: string, emit: (start: number, end: number, hash: number) => void): void;
  /** The second step: one word → its term, or null for a stopword. */
  normalize(raw: string): string | null;
}

export const ENGLISH_ANALYZER_ID = 'en-uax29-possessive-lower-lucenestop-porter/1';

const MAX_TOKEN_CHARS = 255; // Lucene's default max token length

/**
 * The English analyzer. Indexing goes through the same two steps: the BM25
 * term counter (src/index/bm25/term-counter.ts) scans with `scanWords` and
 * normalises each new word form with `normalize`.
 */
export function createEnglishAnalyzer(): Analyzer {
  const queryCache = new SpanInterner(normalizeToken, 1 << 16);
  // the words both analysis paths index: the scanner's, up to Lucene's length
  const words: Analyzer['scanWords'] = (text, emit) => scanWords(text, emit, MAX_TOKEN_CHARS);
  return {
    id: ENGLISH_ANALYZER_ID,
    scanWords: words,
    normalize: normalizeToken,
    analyze(text: string): string[] {
      queryCache.clearIfFull();
      const out: string[] = [];
      words(text, (start, end, hash) => {
        const term = queryCache.termOf(queryCache.internHashed(text, start, end, hash));
        if (term !== null && term !== undefined) out.push(term);
      });
      return out;
    },
  };
}

/** One raw word → its index term, or null when it is a stopword. */
export function normalizeToken(raw: string): string | null {
  let w = raw;
  const n = w.length;
  if (n >= 2 && (w[n - 1] === 's' || w[n - 1] === 'S')) {
    const q = w[n - 2];
    if (q === "'" || q === '\u2019' || q === '\uff07') w = w.slice(0, n - 2);
  }
  if (w.length === 0) return null;
  w = w.toLowerCase();
  if (ENGLISH_STOPWORDS.has(w)) return null;
  return porterStem(w);
}

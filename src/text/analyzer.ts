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
}

export const ENGLISH_ANALYZER_ID = 'en-uax29-possessive-lower-lucenestop-porter/1';

const MAX_TOKEN_CHARS = 255; // Lucene's default max token length
const STEM_CACHE_LIMIT = 500_000;

export function createEnglishAnalyzer(): Analyzer {
  // Vocabulary is Zipfian, so a bounded memo of stems removes most stemmer calls.
  let cache = new Map<string, string | null>();

  const normalize = (raw: string): string | null => {
    let cached = cache.get(raw);
    if (cached !== undefined) return cached;
    cached = normalizeToken(raw);
    if (cache.size >= STEM_CACHE_LIMIT) cache = new Map();
    cache.set(raw, cached);
    return cached;
  };

  return {
    id: ENGLISH_ANALYZER_ID,
    analyze(text: string): string[] {
      const out: string[] = [];
      scanWords(text, (start, end) => {
        if (end - start > MAX_TOKEN_CHARS) return;
        const term = normalize(text.slice(start, end));
        if (term !== null) out.push(term);
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

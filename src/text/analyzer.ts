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
   * The same analysis as `analyze`, reported as handles of `interner`
   * (whose `termOf(handle)` is the term): the allocation-free path for indexing.
   * Returns the number of entries written to `out`. Call
   * `interner.clearIfFull()` between texts to bound its memory.
   */
  analyzeInto(text: string, interner: SpanInterner, out: { buf: Int32Array }): number;
  createInterner(maxEntries?: number): SpanInterner;
}

export const ENGLISH_ANALYZER_ID = 'en-uax29-possessive-lower-lucenestop-porter/1';

const MAX_TOKEN_CHARS = 255; // Lucene's default max token length

export function createEnglishAnalyzer(): Analyzer {
  const createInterner = (maxEntries?: number): SpanInterner => new SpanInterner(normalizeToken, maxEntries);
  const queryCache = createInterner(1 << 16);

  // (start, end, hash) of each word of the text being analysed: the text is
  // scanned once, then its words' slots are touched, then looked up
  let spans = new Int32Array(3 * 1024);

  const analyzeInto = (text: string, interner: SpanInterner, out: { buf: Int32Array }): number => {
    let words = 0;
    scanWords(text, (start, end, hash) => {
      if (end - start > MAX_TOKEN_CHARS) return;
      if (3 * words === spans.length) {
        const next = new Int32Array(spans.length * 2);
        next.set(spans);
        spans = next;
      }
      spans[3 * words] = start;
      spans[3 * words + 1] = end;
      spans[3 * words + 2] = hash;
      words++;
    });
    if (out.buf.length < words) out.buf = new Int32Array(Math.max(words, 2 * out.buf.length));
    for (;;) {
      interner.touch(spans, words);
      const epoch = interner.epoch;
      const buf = out.buf;
      let n = 0;
      for (let i = 0; i < words; i++) {
        const handle = interner.internHashed(
          text,
          spans[3 * i] as number,
          spans[3 * i + 1] as number,
          spans[3 * i + 2] as number,
        );
        if (!interner.isStop(handle)) buf[n++] = handle;
      }
      // the table grew mid-text, so earlier handles are stale: again, on the grown table
      if (interner.epoch === epoch) return n;
    }
  };

  return {
    id: ENGLISH_ANALYZER_ID,
    createInterner,
    analyzeInto,
    analyze(text: string): string[] {
      queryCache.clearIfFull();
      const out: string[] = [];
      scanWords(text, (start, end, hash) => {
        if (end - start > MAX_TOKEN_CHARS) return;
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

import { decodeLength, encodeLength, idf } from '../../src/index/bm25/scoring.js';
import { createEnglishAnalyzer } from '../../src/text/analyzer.js';

/** A deliberately simple BM25 over in-memory documents: the reference the real index must match. */
export function naiveBm25(docs: string[], query: string, k1: number, b: number): Array<{ num: number; score: number }> {
  const an = createEnglishAnalyzer();
  const tokenized = docs.map((d) => an.analyze(d));
  const nonEmpty = tokenized.filter((t) => t.length > 0).length;
  const avgdl = tokenized.reduce((s, t) => s + t.length, 0) / Math.max(1, nonEmpty);
  const qtf = new Map<string, number>();
  for (const t of an.analyze(query)) qtf.set(t, (qtf.get(t) ?? 0) + 1);
  const out: Array<{ num: number; score: number }> = [];
  tokenized.forEach((toks, num) => {
    let score = 0;
    const dl = decodeLength(encodeLength(toks.length));
    for (const [term, q] of qtf) {
      const tf = toks.filter((t) => t === term).length;
      if (tf === 0) continue;
      const df = tokenized.filter((d) => d.includes(term)).length;
      score += (q * idf(df, nonEmpty) * tf) / (tf + k1 * (1 - b + (b * dl) / avgdl));
    }
    if (score > 0) out.push({ num, score });
  });
  return out.sort((a, c) => c.score - a.score || a.num - c.num);
}

/**
 * Ranking metrics over one query's ranked list. `relevant` maps an item to its
 * graded relevance (> 0 = relevant). Pure functions; averaging is the caller's.
 */
export type Relevance = ReadonlyMap<string, number>;

/** Fraction of the relevant items found in the first k (0 when nothing is relevant). */
export function recallAtK(ranked: readonly string[], relevant: Relevance, k: number): number {
  const rel = [...relevant].filter(([, g]) => g > 0).length;
  if (rel === 0) return 0;
  const seen = new Set<string>();
  let found = 0;
  for (const id of ranked.slice(0, k)) {
    if (seen.has(id)) continue;
    seen.add(id);
    if ((relevant.get(id) ?? 0) > 0) found++;
  }
  return found / rel;
}

/** Reciprocal rank of the first relevant item within k. */
export function mrrAtK(ranked: readonly string[], relevant: Relevance, k: number): number {
  const i = ranked.slice(0, k).findIndex((id) => (relevant.get(id) ?? 0) > 0);
  return i < 0 ? 0 : 1 / (i + 1);
}

/**
 * nDCG@k with linear gains (the trec_eval / BEIR definition: gain = grade,
 * discount = log2(rank + 1)); a repeated item counts once.
 */
export function ndcgAtK(ranked: readonly string[], relevant: Relevance, k: number): number {
  const seen = new Set<string>();
  let dcg = 0;
  let rank = 0;
  for (const id of ranked) {
    if (rank >= k) break;
    if (seen.has(id)) continue;
    seen.add(id);
    rank++;
    dcg += (relevant.get(id) ?? 0) / Math.log2(rank + 1);
  }
  const ideal = [...relevant.values()]
    .filter((g) => g > 0)
    .sort((a, b) => b - a)
    .slice(0, k);
  const idcg = ideal.reduce((s, g, i) => s + g / Math.log2(i + 2), 0);
  return idcg === 0 ? 0 : dcg / idcg;
}

/** nDCG@k for binary relevance flags in rank order, with `idealCount` relevant items in the collection. */
export function ndcgBinary(relevant: readonly boolean[], idealCount: number, k: number): number {
  let dcg = 0;
  relevant.slice(0, k).forEach((r, i) => {
    if (r) dcg += 1 / Math.log2(i + 2);
  });
  let idcg = 0;
  for (let i = 0; i < Math.min(idealCount, k); i++) idcg += 1 / Math.log2(i + 2);
  return idcg === 0 ? 0 : dcg / idcg;
}

export function mean(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((s, x) => s + x, 0) / xs.length;
}

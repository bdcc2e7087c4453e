/**
 * Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, SIGIR 2009):
 *   score(d) = Σ_arm w_arm / (k + rank_arm(d)),  ranks 1-based, k = 60 by default.
 * Pure: no I/O, no clocks. Ties are broken by `idOf` (the chunk id) so that the
 * same query on the same index always yields the same list — RL rewards
 * computed from retrieved passages depend on this.
 */
export interface RankedList {
  arm: string;
  /** Best first. */
  hits: ReadonlyArray<{ num: number; score: number }>;
  /** Multiplies this arm's RRF contribution; default 1. */
  weight?: number;
}

export interface FusedHit {
  num: number;
  score: number;
  ranks: Record<string, number>;
  scores: Record<string, number>;
}

export interface FuseOptions {
  /** RRF's k; larger k flattens the advantage of top ranks. */
  k: number;
  topK: number;
  idOf: (num: number) => string;
}

export function fuseRrf(lists: readonly RankedList[], opts: FuseOptions): FusedHit[] {
  const byNum = new Map<number, FusedHit>();
  const weights = new Map<string, number>();
  for (const list of lists) {
    if (weights.has(list.arm)) throw new Error(`fuseRrf: arm "${list.arm}" given twice`);
    weights.set(list.arm, list.weight ?? 1);
    list.hits.forEach((hit, i) => {
      let f = byNum.get(hit.num);
      if (!f) {
        f = { num: hit.num, score: 0, ranks: {}, scores: {} };
        byNum.set(hit.num, f);
      }
      if (f.ranks[list.arm] !== undefined) return; // a list repeating a hit counts its best rank only
      f.ranks[list.arm] = i + 1;
      f.scores[list.arm] = hit.score;
    });
  }
  // sum in a fixed arm order so the score does not depend on the order of `lists`
  const arms = [...weights.keys()].sort();
  for (const f of byNum.values()) {
    for (const arm of arms) {
      const r = f.ranks[arm];
      if (r !== undefined) f.score += (weights.get(arm) as number) / (opts.k + r);
    }
  }
  // Order by score; only runs of equal scores that reach into the top k need
  // chunk ids (an id is a store lookup, and RRF ties are common: a hit only
  // BM25 found at rank r ties with one only the dense arm found at rank r).
  const fused = [...byNum.values()].sort((a, b) => b.score - a.score || a.num - b.num);
  const n = Math.min(Math.max(0, opts.topK), fused.length);
  for (let i = 0; i < n;) {
    const score = (fused[i] as FusedHit).score;
    let j = i + 1;
    while (j < fused.length && (fused[j] as FusedHit).score === score) j++;
    if (j - i > 1) {
      const run = fused.slice(i, j);
      const ids = new Map(run.map((f) => [f.num, opts.idOf(f.num)]));
      run.sort((a, b) => {
        const ia = ids.get(a.num) as string;
        const ib = ids.get(b.num) as string;
        return ia < ib ? -1 : ia > ib ? 1 : a.num - b.num;
      });
      fused.splice(i, j - i, ...run);
    }
    i = j;
  }
  return fused.slice(0, n);
}

/** One result list of a fused search: a corpus's hits for one phrasing, best first. */
export interface HitList<H extends { id: string }> {
  corpus: string;
  hits: readonly H[];
}

/**
 * RRF over whole result lists (several phrasings of one need, several corpora): a hit is its
 * corpus and chunk id, its score the sum of 1 / (k + rank) over the lists that hold it; ties go
 * to the smaller corpus name, then chunk id. Returns the best `topK`, each with its corpus.
 */
export function fuseHitLists<H extends { id: string }>(
  lists: ReadonlyArray<HitList<H>>,
  k: number,
  topK: number,
): Array<{ corpus: string; hit: H; score: number }> {
  const byKey = new Map<string, { corpus: string; hit: H; score: number }>();
  for (const list of lists) {
    list.hits.forEach((hit, i) => {
      const key = `${list.corpus}\u0000${hit.id}`;
      const f = byKey.get(key) ?? { corpus: list.corpus, hit, score: 0 };
      f.score += 1 / (k + i + 1);
      byKey.set(key, f);
    });
  }
  return [...byKey.values()]
    .sort(
      (a, b) =>
        b.score - a.score ||
        (a.corpus < b.corpus ? -1 : a.corpus > b.corpus ? 1 : 0) ||
        (a.hit.id < b.hit.id ? -1 : a.hit.id > b.hit.id ? 1 : 0),
    )
    .slice(0, topK);
}

/**
 * Term ids sorted by their terms in `compareTerms` (code-unit) order, for a
 * spill's new terms. A comparator sort of a worker's vocabulary spent ≈ 30%
 * of a spill comparing strings, so each term first gets a numeric key from its
 * first six code units and a typed-array sort (no comparator) orders the keys;
 * only terms whose keys tie are then compared as strings.
 *
 * The key maps each code unit to a rank in 0–39 that never decreases as the
 * unit grows: 0 past the end, then digits and a–z one rank each (exact),
 * and one shared rank for each stretch of other units (lossy). A key stops
 * after its first lossy unit, so two terms that share a lossy rank there tie
 * instead of being ordered by what follows. Hence s < t implies
 * key(s) ≤ key(t), and equal keys are sorted by the strings themselves.
 */
/** Room for the position in the key's low bits: 40^6 · 2^21 < 2^53. */
const INDEX_BITS = 2 ** 21;

/** Code-unit order; any fixed total order works as long as runs and merge agree. */
export function compareTerms(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A code unit's rank: non-decreasing in the unit; 1, 12 and 39 are shared (lossy). */
function rank(c: number): number {
  if (c < 0x30) return 1;
  if (c <= 0x39) return c - 0x30 + 2; // 2–11
  if (c < 0x61) return 12;
  if (c <= 0x7a) return c - 0x61 + 13; // 13–38
  return 39;
}

function isExact(r: number): boolean {
  return r !== 1 && r !== 12 && r !== 39;
}

/** The term's first six units as a base-40 number (see above). */
export function prefixKey(term: string): number {
  let key = 0;
  let open = true;
  for (let i = 0; i < 6; i++) {
    const r = open && i < term.length ? rank(term.charCodeAt(i)) : 0;
    key = key * 40 + r;
    if (r === 0 || !isExact(r)) open = false;
  }
  return key;
}

/** compareTerms of terms[a] and terms[b], settled by their prefix keys (`keys[id]`) when those differ. */
export function compareKeyed(a: number, b: number, terms: readonly string[], keys: Float64Array): number {
  const ka = keys[a] as number;
  const kb = keys[b] as number;
  return ka !== kb ? ka - kb : compareTerms(terms[a] as string, terms[b] as string);
}

/** `ids` in term order; `keys[id]` must hold prefixKey(terms[id]). */
export function sortTermIds(ids: ArrayLike<number>, terms: readonly string[], keys: Float64Array): Int32Array {
  const n = ids.length;
  const out = Int32Array.from(ids);
  if (n >= INDEX_BITS) {
    out.sort((a, b) => compareKeyed(a, b, terms, keys));
    return out;
  }
  const packed = new Float64Array(n);
  for (let i = 0; i < n; i++) packed[i] = (keys[out[i] as number] as number) * INDEX_BITS + i;
  packed.sort();
  for (let i = 0; i < n; i++) out[i] = ids[(packed[i] as number) % INDEX_BITS] as number;
  // runs of equal prefix keys: order them by the whole term
  let from = 0;
  for (let i = 1; i <= n; i++) {
    const id = out[i] as number;
    if (i < n && keys[id] === keys[out[from] as number]) continue;
    if (i - from > 1) out.subarray(from, i).sort((a, b) => compareTerms(terms[a] as string, terms[b] as string));
    from = i;
  }
  return out;
}

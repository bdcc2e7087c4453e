/**
 * BM25 as Lucene ≥ 8 computes it (BM25Similarity), so our figures are
 * comparable with Anserini/Pyserini's published BEIR baselines:
 *
 *   score(q, d) = Σ_{t ∈ q} qtf(t) · idf(t) · tf / (tf + k1 · (1 − b + b · dl / avgdl))
 *   idf(t)      = ln(1 + (N − df + 0.5) / (df + 0.5))
 *
 * N = documents with at least one indexed token, df = documents containing t,
 * tf = occurrences of t in d, qtf = occurrences of t in the query (Anserini's
 * bag-of-words query weights repeated terms), avgdl = total tokens / N.
 * dl is the document length quantised to one byte as Lucene stores it
 * (SmallFloat.intToByte4: exact below 24, then 4 significant bits).
 * Lucene drops BM25's constant (k1 + 1) numerator factor; ranking is unchanged.
 */
export interface Bm25Params {
  /** Term-frequency saturation. Default 0.9 (Anserini's BEIR setting). */
  k1: number;
  /** Length normalisation. Default 0.4 (Anserini's BEIR setting). */
  b: number;
}

export const BM25_DEFAULTS: Bm25Params = { k1: 0.9, b: 0.4 };

export function idf(df: number, docCount: number): number {
  return Math.log(1 + (docCount - df + 0.5) / (df + 0.5));
}

// Lucene's SmallFloat int4 encoding: 3 explicit mantissa bits plus a shift.
function longToInt4(i: number): number {
  const numBits = 32 - Math.clz32(i);
  if (numBits < 4) return i; // subnormal
  const shift = numBits - 4;
  let encoded = (i >>> shift) & 0x07; // the leading bit is implicit
  encoded |= (shift + 1) << 3;
  return encoded;
}

function int4ToLong(i: number): number {
  const bits = i & 0x07;
  const shift = (i >>> 3) - 1;
  return shift === -1 ? bits : (bits | 0x08) * 2 ** shift;
}

const MAX_INT4 = longToInt4(0x7fffffff);
const NUM_FREE_VALUES = 255 - MAX_INT4; // = 24: lengths below this are exact

/** Document length → one byte (monotonic, lossy above 23). */
export function encodeLength(length: number): number {
  if (length < NUM_FREE_VALUES) return length;
  return NUM_FREE_VALUES + longToInt4(Math.min(length, 0x7fffffff) - NUM_FREE_VALUES);
}

/** One byte → the document length it stands for. */
export function decodeLength(byte: number): number {
  if (byte < NUM_FREE_VALUES) return byte;
  return NUM_FREE_VALUES + int4ToLong(byte - NUM_FREE_VALUES);
}

/**
 * Scores are sums of per-term contributions, each rounded to a whole number
 * of 2^-32 units. Every such sum is exact in a double (a term adds less than
 * 2^37 units, so 2^16 terms stay under 2^53), so a chunk's score is the same
 * whatever order its terms are added in: the exhaustive scorer, which adds
 * term by term, and the block-max scorer, which adds the rarest lists first,
 * return bit-identical scores and so identical hits. 2^-32 is far finer than
 * any difference the ranking could care about.
 */
export const SCORE_UNIT = 2 ** 32;

/** A positive contribution in whole `SCORE_UNIT`s (at least one, so a match always counts). */
export function quantize(s: number): number {
  const q = Math.round(s * SCORE_UNIT);
  return q > 0 ? q : 1;
}

/** avgdl as the searcher and the block-max pass both compute it (they must agree to the bit). */
export function averageLength(stats: { docCount: number; totalTokens: number }): number {
  return stats.docCount > 0 ? stats.totalTokens / stats.docCount : 1;
}

/** k1 · (1 − b + b · dl / avgdl) for each of the 256 length bytes. */
export function lengthNormTable(params: Bm25Params, avgdl: number): Float32Array {
  const table = new Float32Array(256);
  const avg = avgdl > 0 ? avgdl : 1;
  for (let i = 0; i < 256; i++) {
    table[i] = params.k1 * (1 - params.b + (params.b * decodeLength(i)) / avg);
  }
  return table;
}

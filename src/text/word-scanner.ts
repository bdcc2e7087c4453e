/**
 * A word scanner after Unicode UAX #29 word boundaries, the rules Lucene's
 * StandardTokenizer implements, simplified to what matters for ranking:
 * - letters and digits join ("abc123", "3.14", "don't", "u.s.a", "1,000");
 * - '.', '’', "'" join letter–letter or digit–digit; ':' '·' join letters;
 *   ',' ';' join digits; '_' joins anything;
 * - Han and Hiragana characters are one token each (no dictionary segmentation);
 * - combining marks and format characters stay inside the word they follow.
 * Character classes come from Unicode properties, so it is script-aware.
 */

const OTHER = 0;
const LETTER = 1;
const DIGIT = 2;
const IDEO = 3;
const MID_LETTER = 4;
const MID_NUM = 5;
const MID_NUM_LET = 6;
const EXTEND_NUM_LET = 7;
const EXTEND = 8;

const MID_LETTER_CHARS = ':\u00b7\u0387\u05f4\u2027\ufe13\ufe55\uff1a';
const MID_NUM_CHARS = ',;\u037e\u0589\u060c\u060d\u066c\u07f8\u2044\ufe10\ufe14\ufe50\ufe54\uff0c\uff1b';
const MID_NUM_LET_CHARS = ".'\u2018\u2019\u2024\ufe52\uff07\uff0e";
const EXTEND_NUM_LET_CHARS = '_\u202f\u203f\u2040\u2054\ufe33\ufe34\ufe4d\ufe4e\ufe4f\uff3f';

const RE_IDEO = /[\p{sc=Han}\p{sc=Hiragana}]/u;
const RE_LETTER = /[\p{L}\p{Nl}\p{No}]/u;
const RE_DIGIT = /\p{Nd}/u;
const RE_EXTEND = /[\p{M}\p{Cf}\u200d]/u;

function classifyCodePoint(cp: number): number {
  const ch = String.fromCodePoint(cp);
  if (MID_LETTER_CHARS.includes(ch)) return MID_LETTER;
  if (MID_NUM_CHARS.includes(ch)) return MID_NUM;
  if (MID_NUM_LET_CHARS.includes(ch)) return MID_NUM_LET;
  if (EXTEND_NUM_LET_CHARS.includes(ch)) return EXTEND_NUM_LET;
  if (RE_IDEO.test(ch)) return IDEO;
  if (RE_DIGIT.test(ch)) return DIGIT;
  if (RE_LETTER.test(ch)) return LETTER;
  if (RE_EXTEND.test(ch)) return EXTEND;
  return OTHER;
}

// One byte per BMP code unit, filled on first use (≈10 ms) so that the hot
// loop is a table lookup. Astral code points go through a small memo.
let bmpTable: Uint8Array | undefined;
const astral = new Map<number, number>();

function getBmpTable(): Uint8Array {
  if (bmpTable) return bmpTable;
  const t = new Uint8Array(0x10000);
  for (let cp = 0; cp < 0x10000; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue; // surrogates are handled as pairs
    t[cp] = classifyCodePoint(cp);
  }
  bmpTable = t;
  return t;
}

function classifyAstral(cp: number): number {
  let c = astral.get(cp);
  if (c === undefined) {
    c = classifyCodePoint(cp);
    if (astral.size < 100_000) astral.set(cp, c);
  }
  return c;
}

/** FNV-1a over UTF-16 code units: the hash `scanWords` reports and `SpanInterner` keys on. */
export const FNV_OFFSET = 0x811c9dc5 | 0;
export const FNV_PRIME = 16777619;

/** FNV-1a of text[start, end), the same value `scanWords` reports for a word there. */
export function hashSpan(text: string, start: number, end: number): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h;
}

/**
 * Calls `emit(start, end, hash)` for each word of `text`, as UTF-16 offsets,
 * with `hash` = hashSpan(text, start, end), computed from the code units the
 * scan reads anyway (hashing again in the interner was a second pass over
 * every word). Words longer than `maxChars` code units are not reported.
 */
export function scanWords(
  text: string,
  emit: (start: number, end: number, hash: number) => void,
  maxChars = Infinity,
): void {
  const table = getBmpTable();
  const n = text.length;
  let i = 0;
  while (i < n) {
    const u = text.charCodeAt(i);
    const pair = startsPair(text, i, u, n);
    const c = pair ? classifyAstral(text.codePointAt(i) ?? u) : (table[u] as number);
    const w = pair ? 2 : 1;
    if (c === IDEO) {
      emit(i, i + w, hashSpan(text, i, i + w));
      i += w;
      continue;
    }
    if (c !== LETTER && c !== DIGIT && c !== EXTEND_NUM_LET) {
      i += w;
      continue;
    }
    const start = i;
    let h = Math.imul(FNV_OFFSET ^ u, FNV_PRIME);
    if (pair) h = Math.imul(h ^ text.charCodeAt(i + 1), FNV_PRIME);
    let last = c; // class of the last letter/digit/'_' in the word
    let hasWordChar = c !== EXTEND_NUM_LET;
    let j = i + w;
    while (j < n) {
      const uj = text.charCodeAt(j);
      const pj = startsPair(text, j, uj, n);
      const cj = pj ? classifyAstral(text.codePointAt(j) ?? uj) : (table[uj] as number);
      const wj = pj ? 2 : 1;
      let joins = cj === LETTER || cj === DIGIT || cj === EXTEND_NUM_LET || cj === EXTEND;
      if (cj === LETTER || cj === DIGIT || cj === EXTEND_NUM_LET) {
        last = cj;
        if (cj !== EXTEND_NUM_LET) hasWordChar = true;
      } else if (cj === MID_LETTER || cj === MID_NUM || cj === MID_NUM_LET) {
        const k = j + wj;
        if (k < n) {
          const next = classAt(text, table, k, n);
          joins =
            (last === LETTER && next === LETTER && (cj === MID_LETTER || cj === MID_NUM_LET)) ||
            (last === DIGIT && next === DIGIT && (cj === MID_NUM || cj === MID_NUM_LET));
        }
      }
      if (!joins) break;
      h = Math.imul(h ^ uj, FNV_PRIME);
      if (pj) h = Math.imul(h ^ text.charCodeAt(j + 1), FNV_PRIME);
      j += wj;
    }
    if (hasWordChar && j - start <= maxChars) emit(start, j, h);
    i = j;
  }
}

/** Whether code unit `u` at `i` starts a surrogate pair; a lone surrogate is one character of class OTHER. */
function startsPair(text: string, i: number, u: number, n: number): boolean {
  if (u < 0xd800 || u > 0xdbff || i + 1 >= n) return false;
  const next = text.charCodeAt(i + 1);
  return next >= 0xdc00 && next <= 0xdfff;
}

function classAt(text: string, table: Uint8Array, i: number, n: number): number {
  const u = text.charCodeAt(i);
  return startsPair(text, i, u, n) ? classifyAstral(text.codePointAt(i) ?? u) : (table[u] as number);
}

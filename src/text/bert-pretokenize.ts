/**
 * BERT's "basic tokenizer" (the pre-tokenization of Hugging Face's
 * BertPreTokenizer + BertNormalizer): words are runs of non-space,
 * non-punctuation characters; every punctuation character and every CJK
 * ideograph is a word of its own. Used by the WordPiece tokenizer and by the
 * chunker's word counter, so both agree on word boundaries.
 */
export interface WordSpan {
  start: number; // UTF-16 offsets into the original text
  end: number;
}

const RE_PUNCT = /\p{P}/u;
const RE_WS = /\s/u;
const RE_CONTROL = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}]/u;

/** Hugging Face's _is_chinese_char: the CJK Unified Ideograph blocks. */
export function isCjkCodePoint(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b820 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

/** BERT counts all non-letter/number ASCII symbols as punctuation ("$", "^", "`"). */
export function isBertPunctuation(cp: number): boolean {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) {
    return true;
  }
  return cp > 127 && RE_PUNCT.test(String.fromCodePoint(cp));
}

export function isBertWhitespace(cp: number): boolean {
  if (cp === 32 || cp === 9 || cp === 10 || cp === 13) return true;
  return cp > 127 && RE_WS.test(String.fromCodePoint(cp)) && cp !== 0x200b;
}

/** Characters BertNormalizer(clean_text) deletes: NUL, U+FFFD and "other" chars (Cc, Cf, Co, Cn) except tab/newline. */
export function isBertDroppedChar(cp: number): boolean {
  if (cp === 0 || cp === 0xfffd) return true;
  if (cp === 9 || cp === 10 || cp === 13) return false;
  if (cp < 32 || cp === 127) return true;
  return cp > 127 && RE_CONTROL.test(String.fromCodePoint(cp));
}

// 0 = word char, 1 = whitespace, 2 = punctuation/CJK (a word alone), 3 = dropped
function classify(cp: number): number {
  if (isBertDroppedChar(cp)) return 3;
  if (isBertWhitespace(cp)) return 1;
  if (isBertPunctuation(cp) || isCjkCodePoint(cp)) return 2;
  return 0;
}

// Classes are memoised: a BMP code point is classified (three Unicode-property
// regexes) the first time it is seen, then read from a table. A counting loop
// over accented, Cyrillic and CJK text went from 85 to 22 ns per non-ASCII
// character; English Wikipedia has few of them (0.3%), other scripts all.
const UNSEEN = 255;
let bmpClass: Uint8Array | undefined;
const astralClass = new Map<number, number>();

function getBmpClass(): Uint8Array {
  if (!bmpClass) {
    bmpClass = new Uint8Array(0x10000).fill(UNSEEN);
    for (let cp = 0; cp < 128; cp++) bmpClass[cp] = classify(cp);
  }
  return bmpClass;
}

function classOf(table: Uint8Array, cp: number): number {
  if (cp < 0x10000) {
    let c = table[cp] as number;
    if (c === UNSEEN) {
      c = classify(cp);
      table[cp] = c;
    }
    return c;
  }
  let c = astralClass.get(cp);
  if (c === undefined) {
    c = classify(cp);
    if (astralClass.size < 100_000) astralClass.set(cp, c);
  }
  return c;
}

// Each class as bits: 1 = a word character, 2 = dropped (keeps the word state),
// 4 = a word alone. countBertWords adds and masks these bits instead of
// branching: word boundaries are data-dependent, and a branch on each one
// mispredicted.
const CLASS_BITS = Uint8Array.of(1, 0, 4, 2);
let asciiBits: Uint8Array | undefined;

/** The number of words bertWords(text) returns, without allocating them. */
export function countBertWords(text: string): number {
  const table = getBmpClass();
  asciiBits ??= Uint8Array.from(table.subarray(0, 128), (c) => CLASS_BITS[c] as number);
  const ascii = asciiBits;
  const n = text.length;
  let words = 0;
  let inWord = 0;
  for (let i = 0; i < n; i++) {
    let cp = text.charCodeAt(i);
    let bits: number;
    if (cp < 128) bits = ascii[cp] as number;
    else {
      if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < n) {
        cp = text.codePointAt(i) as number;
        if (cp > 0xffff) i++;
      }
      bits = CLASS_BITS[classOf(table, cp)] as number;
    }
    const word = bits & 1;
    words += (word & (inWord ^ 1)) + (bits >> 2);
    inWord = word | ((bits >> 1) & inWord);
  }
  return words;
}

/**
 * Calls `emit(start, end)` for each BERT word of `text`, in order (UTF-16
 * offsets). A dropped character inside a word does not end it (the
 * normalizer deletes it; the word goes on), so a span may contain dropped
 * characters, which a consumer that reads the word's text must skip.
 */
export function forEachBertWord(text: string, emit: (start: number, end: number) => void): void {
  const table = getBmpClass();
  let wordStart = -1;
  const n = text.length;
  for (let i = 0; i < n;) {
    let cp = text.charCodeAt(i);
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < n) cp = text.codePointAt(i) as number;
    const w = cp > 0xffff ? 2 : 1;
    const c = cp < 128 ? (table[cp] as number) : classOf(table, cp);
    if (c === 0) {
      if (wordStart < 0) wordStart = i;
    } else if (c !== 3) {
      if (wordStart >= 0) {
        emit(wordStart, i);
        wordStart = -1;
      }
      if (c === 2) emit(i, i + w);
    }
    i += w;
  }
  if (wordStart >= 0) emit(wordStart, n);
}

/** Splits `text` into BERT words. Dropped characters never start a word. */
export function bertWords(text: string): WordSpan[] {
  const out: WordSpan[] = [];
  forEachBertWord(text, (start, end) => out.push({ start, end }));
  return out;
}

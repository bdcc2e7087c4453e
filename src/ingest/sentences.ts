/**
 * Sentence boundaries for the chunker: after . ! ? … (plus closing quotes or
 * brackets) when whitespace and a non-lowercase character follow, and at
 * line breaks. Common abbreviations and initials ("Dr.", "U.S.", "J. R.")
 * do not end a sentence. Returns [start, end) spans that tile the text.
 */
const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'sr',
  'jr',
  'st',
  'vs',
  'etc',
  'e.g',
  'i.e',
  'u.s',
  'u.k',
  'inc',
  'ltd',
  'co',
  'corp',
  'no',
  'fig',
  'al',
  'gen',
  'gov',
  'sen',
  'rep',
  'rev',
  'lt',
  'col',
  'sgt',
  'capt',
  'mt',
  'ft',
  'jan',
  'feb',
  'mar',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
  'approx',
  'dept',
  'est',
  'vol',
  'p',
  'pp',
]);

const TERMINATORS = '.!?…。！？';
const CLOSERS = '"\'”’)]»';

export function splitSentences(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let start = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const ch = text[i] as string;
    let end = -1;
    if (ch === '\n') {
      end = i + 1;
    } else if (TERMINATORS.includes(ch)) {
      let j = i + 1;
      while (j < n && (TERMINATORS.includes(text[j] as string) || CLOSERS.includes(text[j] as string))) j++;
      const cjk = ch === '。' || ch === '！' || ch === '？';
      if (cjk || j >= n) end = j;
      else if (/\s/.test(text[j] as string) && endsSentence(text, start, i, j)) end = j;
      if (end < 0) i = j - 1;
    }
    if (end > 0) {
      // absorb trailing whitespace so spans tile the text
      while (end < n && /\s/.test(text[end] as string)) end++;
      if (end > start) spans.push([start, end]);
      start = end;
      i = end - 1;
    }
  }
  if (start < n) spans.push([start, n]);
  return spans;
}

function endsSentence(text: string, sentStart: number, dot: number, after: number): boolean {
  // next visible character: a lowercase letter continues the sentence ("e.g. the")
  let k = after;
  while (k < text.length && /\s/.test(text[k] as string)) k++;
  const next = text[k];
  if (next !== undefined && next !== next.toUpperCase() && next === next.toLowerCase()) return false;
  if (text[dot] !== '.') return true;
  // the word before the period
  let w = dot;
  while (w > sentStart && !/\s/.test(text[w - 1] as string)) w--;
  const word = text.slice(w, dot).replace(/^[("'“‘[]+/, '');
  if (word.length === 1 && /\p{Lu}/u.test(word)) return false; // an initial
  return !ABBREVIATIONS.has(word.toLowerCase());
}

/**
 * The Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", 1980),
 * following the author's reference implementation and its documented
 * departures from the paper ("bli"→"ble", "logi"→"log", words of one or two
 * letters left alone). Lucene's PorterStemFilter implements the same
 * algorithm, which keeps our BM25 comparable with Lucene/Anserini figures.
 * Input is expected lowercase.
 *
 * One file of ≈ 460 lines on purpose: the algorithm's five steps are one
 * transcription, checked rule by rule against the reference (porter.test.ts),
 * and splitting them would scatter rules that read in sequence.
 *
 * Both analysis paths stem every new word form here (the index build about a
 * million per million passages), so this works on the word's UTF-16 code
 * units in one reused buffer and returns the word itself, or a slice of it,
 * when stemming only shortened it. A word with a surrogate is stemmed by
 * `porterStemReference`, the step-by-step transcription of the reference
 * implementation, which counts it in code points as the reference does; on
 * every other word the two agree (a property test checks it).
 */
export function porterStem(word: string): string {
  const n = word.length;
  if (n <= 2) return word;
  if (n > buf.length) buf = new Uint16Array(2 * n);
  const b = buf;
  for (let i = 0; i < n; i++) {
    const c = word.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) return porterStemReference(word);
    b[i] = c;
  }
  k = n - 1;
  j = 0;
  rewritten = false;
  step1ab();
  if (k > 0) {
    step1c();
    step2();
    step3();
    step4();
    step5();
  }
  if (!rewritten) return k === n - 1 ? word : word.slice(0, k + 1);
  return String.fromCharCode(...b.subarray(0, k + 1));
}

// the fast stemmer's state: the word's code units, k the index of its last
// unit, j the end of the stem after a successful ends(), and whether a unit
// was rewritten (else the stem is a prefix of the word)
let buf = new Uint16Array(64);
let k = 0;
let j = 0;
let rewritten = false;

const A = 0x61;
const E = 0x65;
const I = 0x69;
const L = 0x6c;
const O = 0x6f;
const S = 0x73;
const T = 0x74;
const U = 0x75;
const W = 0x77;
const X = 0x78;
const Y = 0x79;
const Z = 0x7a;

function cons(i: number): boolean {
  const c = buf[i];
  if (c === A || c === E || c === I || c === O || c === U) return false;
  if (c === Y) return i === 0 ? true : !cons(i - 1);
  return true;
}

/** The number of VC sequences in b[0..j]. */
function m(): number {
  let n = 0;
  let i = 0;
  for (;;) {
    if (i > j) return n;
    if (!cons(i)) break;
    i++;
  }
  i++;
  for (;;) {
    for (;;) {
      if (i > j) return n;
      if (cons(i)) break;
      i++;
    }
    i++;
    n++;
    for (;;) {
      if (i > j) return n;
      if (!cons(i)) break;
      i++;
    }
    i++;
  }
}

function vowelInStem(): boolean {
  for (let i = 0; i <= j; i++) if (!cons(i)) return true;
  return false;
}

function doubleC(at: number): boolean {
  if (at < 1) return false;
  if (buf[at] !== buf[at - 1]) return false;
  return cons(at);
}

/** consonant–vowel–consonant ending at i, the last consonant not w, x or y. */
function cvc(i: number): boolean {
  if (i < 2 || !cons(i) || cons(i - 1) || !cons(i - 2)) return false;
  const c = buf[i];
  return c !== W && c !== X && c !== Y;
}

function ends(s: string): boolean {
  const l = s.length;
  if (l > k + 1) return false;
  const off = k - l + 1;
  for (let i = 0; i < l; i++) if (buf[off + i] !== s.charCodeAt(i)) return false;
  j = k - l;
  return true;
}

function setTo(s: string): void {
  const base = j + 1;
  for (let i = 0; i < s.length; i++) buf[base + i] = s.charCodeAt(i);
  k = j + s.length;
  rewritten = true;
}

function r(s: string): void {
  if (m() > 0) setTo(s);
}

function step1ab(): void {
  if (buf[k] === S) {
    if (ends('sses')) k -= 2;
    else if (ends('ies')) setTo('i');
    else if (buf[k - 1] !== S) k--;
  }
  if (ends('eed')) {
    if (m() > 0) k--;
  } else if ((ends('ed') || ends('ing')) && vowelInStem()) {
    k = j;
    if (ends('at')) setTo('ate');
    else if (ends('bl')) setTo('ble');
    else if (ends('iz')) setTo('ize');
    else if (doubleC(k)) {
      k--;
      const c = buf[k];
      if (c === L || c === S || c === Z) k++;
    } else if (m() === 1 && cvc(k)) setTo('e');
  }
}

function step1c(): void {
  if (ends('y') && vowelInStem()) {
    buf[k] = I;
    rewritten = true;
  }
}

function step2(): void {
  if (k < 1) return;
  replaceFirst(STEP2[String.fromCharCode(buf[k - 1] as number)]);
}

function step3(): void {
  replaceFirst(STEP3[String.fromCharCode(buf[k] as number)]);
}

/** Steps 2 and 3: the first of `pairs` whose suffix the word ends with is replaced (when m() > 0). */
function replaceFirst(pairs: Array<[string, string]> | undefined): void {
  if (!pairs) return;
  for (const [suffix, repl] of pairs) {
    if (ends(suffix)) {
      r(repl);
      return;
    }
  }
}

function step4(): void {
  if (k < 1) return;
  const suffixes = STEP4[String.fromCharCode(buf[k - 1] as number)];
  if (!suffixes) return;
  let matched = false;
  for (const suffix of suffixes) {
    if (!ends(suffix)) continue;
    if (suffix === 'ion') {
      const c = buf[j];
      if (j < 0 || (c !== S && c !== T)) continue;
    }
    matched = true;
    break;
  }
  if (matched && m() > 1) k = j;
}

function step5(): void {
  j = k;
  if (buf[k] === E) {
    const a = m();
    if (a > 1 || (a === 1 && !cvc(k - 1))) k--;
  }
  if (buf[k] === L && doubleC(k) && m() > 1) k--;
}

/**
 * The reference implementation's steps transcribed over the word's code
 * points: the stemmer of words with a surrogate, and the specification the
 * fast path is tested against.
 */
export function porterStemReference(word: string): string {
  if (word.length <= 2) return word;
  const st = new PorterState(word);
  st.step1ab();
  if (st.k > 0) {
    st.step1c();
    st.step2();
    st.step3();
    st.step4();
    st.step5();
  }
  return st.result();
}

class PorterState {
  b: string[];
  k: number; // index of the last character of the current word
  j = 0; // end of the stem, set by a successful ends()

  constructor(word: string) {
    this.b = Array.from(word);
    this.k = this.b.length - 1;
  }

  result(): string {
    return this.b.slice(0, this.k + 1).join('');
  }

  cons(i: number): boolean {
    switch (this.b[i]) {
      case 'a':
      case 'e':
      case 'i':
      case 'o':
      case 'u':
        return false;
      case 'y':
        return i === 0 ? true : !this.cons(i - 1);
      default:
        return true;
    }
  }

  /** The number of VC sequences in b[0..j]. */
  m(): number {
    let n = 0;
    let i = 0;
    const j = this.j;
    for (;;) {
      if (i > j) return n;
      if (!this.cons(i)) break;
      i++;
    }
    i++;
    for (;;) {
      for (;;) {
        if (i > j) return n;
        if (this.cons(i)) break;
        i++;
      }
      i++;
      n++;
      for (;;) {
        if (i > j) return n;
        if (!this.cons(i)) break;
        i++;
      }
      i++;
    }
  }

  vowelInStem(): boolean {
    for (let i = 0; i <= this.j; i++) if (!this.cons(i)) return true;
    return false;
  }

  doubleC(j: number): boolean {
    if (j < 1) return false;
    if (this.b[j] !== this.b[j - 1]) return false;
    return this.cons(j);
  }

  /** consonant–vowel–consonant ending at i, the last consonant not w, x or y. */
  cvc(i: number): boolean {
    if (i < 2 || !this.cons(i) || this.cons(i - 1) || !this.cons(i - 2)) return false;
    const ch = this.b[i];
    return ch !== 'w' && ch !== 'x' && ch !== 'y';
  }

  ends(s: string): boolean {
    const l = s.length;
    if (l > this.k + 1) return false;
    const off = this.k - l + 1;
    for (let i = 0; i < l; i++) if (this.b[off + i] !== s[i]) return false;
    this.j = this.k - l;
    return true;
  }

  setTo(s: string): void {
    const base = this.j + 1;
    for (let i = 0; i < s.length; i++) this.b[base + i] = s[i] as string;
    this.k = this.j + s.length;
  }

  r(s: string): void {
    if (this.m() > 0) this.setTo(s);
  }

  step1ab(): void {
    if (this.b[this.k] === 's') {
      if (this.ends('sses')) this.k -= 2;
      else if (this.ends('ies')) this.setTo('i');
      else if (this.b[this.k - 1] !== 's') this.k--;
    }
    if (this.ends('eed')) {
      if (this.m() > 0) this.k--;
    } else if ((this.ends('ed') || this.ends('ing')) && this.vowelInStem()) {
      this.k = this.j;
      if (this.ends('at')) this.setTo('ate');
      else if (this.ends('bl')) this.setTo('ble');
      else if (this.ends('iz')) this.setTo('ize');
      else if (this.doubleC(this.k)) {
        this.k--;
        const ch = this.b[this.k];
        if (ch === 'l' || ch === 's' || ch === 'z') this.k++;
      } else if (this.m() === 1 && this.cvc(this.k)) this.setTo('e');
    }
  }

  step1c(): void {
    if (this.ends('y') && this.vowelInStem()) this.b[this.k] = 'i';
  }

  step2(): void {
    if (this.k < 1) return;
    this.replaceFirst(STEP2[this.b[this.k - 1] as string]);
  }

  step3(): void {
    this.replaceFirst(STEP3[this.b[this.k] as string]);
  }

  replaceFirst(pairs: Array<[string, string]> | undefined): void {
    if (!pairs) return;
    for (const [suffix, repl] of pairs) {
      if (this.ends(suffix)) {
        this.r(repl);
        return;
      }
    }
  }

  step4(): void {
    if (this.k < 1) return;
    const suffixes = STEP4[this.b[this.k - 1] as string];
    if (!suffixes) return;
    let matched = false;
    for (const suffix of suffixes) {
      if (!this.ends(suffix)) continue;
      if (suffix === 'ion') {
        const c = this.b[this.j];
        if (this.j < 0 || (c !== 's' && c !== 't')) continue;
      }
      matched = true;
      break;
    }
    if (matched && this.m() > 1) this.k = this.j;
  }

  step5(): void {
    this.j = this.k;
    if (this.b[this.k] === 'e') {
      const a = this.m();
      if (a > 1 || (a === 1 && !this.cvc(this.k - 1))) this.k--;
    }
    if (this.b[this.k] === 'l' && this.doubleC(this.k) && this.m() > 1) this.k--;
  }
}

// Suffix tables keyed by the penultimate (step2, step4) or last (step3)
// letter, in the reference implementation's order: the first match wins.
const STEP2: Record<string, Array<[string, string]>> = {
  a: [
    ['ational', 'ate'],
    ['tional', 'tion'],
  ],
  c: [
    ['enci', 'ence'],
    ['anci', 'ance'],
  ],
  e: [['izer', 'ize']],
  l: [
    ['bli', 'ble'],
    ['alli', 'al'],
    ['entli', 'ent'],
    ['eli', 'e'],
    ['ousli', 'ous'],
  ],
  o: [
    ['ization', 'ize'],
    ['ation', 'ate'],
    ['ator', 'ate'],
  ],
  s: [
    ['alism', 'al'],
    ['iveness', 'ive'],
    ['fulness', 'ful'],
    ['ousness', 'ous'],
  ],
  t: [
    ['aliti', 'al'],
    ['iviti', 'ive'],
    ['biliti', 'ble'],
  ],
  g: [['logi', 'log']],
};

const STEP3: Record<string, Array<[string, string]>> = {
  e: [
    ['icate', 'ic'],
    ['ative', ''],
    ['alize', 'al'],
  ],
  i: [['iciti', 'ic']],
  l: [
    ['ical', 'ic'],
    ['ful', ''],
  ],
  s: [['ness', '']],
};

const STEP4: Record<string, string[]> = {
  a: ['al'],
  c: ['ance', 'ence'],
  e: ['er'],
  i: ['ic'],
  l: ['able', 'ible'],
  n: ['ant', 'ement', 'ment', 'ent'],
  o: ['ion', 'ou'],
  s: ['ism'],
  t: ['ate', 'iti'],
  u: ['ous'],
  v: ['ive'],
  z: ['ize'],
};

// AssemblyScript, compiled to dist/wasm/term-counter.wasm by `npm run build`
// One file of ≈ 850 lines on purpose: a WebAssembly module's memory layout (its
// regions and their growth) is shared by every function in it, and AssemblyScript
// compiles one entry file to one module.
// (not by tsc: this file is excluded from tsconfig.json, eslint and prettier).
//
// The BM25 inverter's per-word bookkeeping, in WebAssembly: a hash table from
// a word's UTF-16 code units to its term id, a second one numbering the
// normalised terms, the per-chunk term counts, each term's postings of the
// current run (already encoded as the run file stores them) and the writing
// of the run's records. The words themselves are found by the
// TypeScript scanner (src/text/word-scanner.ts) and normalised by the
// TypeScript analyzer through the `resolve` import, so the analysis rules
// live in one place, shared with the query path. See the 2026-11 design notes (git show 97ad262:docs/lab-notes/2026-11-design-notes.md) "BM25 term
// counting in WebAssembly".
//
// Memory is raw: every region is allocated with heap.alloc (the minimal
// runtime's TLSF allocator) and addressed with load/store; nothing is managed.

/** Term id of the word at (chunk `doc` of the batch, code units [start, start + len)); -1 for a stopword. `entry` numbers the table's entries since the last clear. */
@external('env', 'resolve')
declare function resolve(entry: u32, doc: u32, start: u32, len: u32): i32;

const SLOT: usize = 32;
// slot fields (byte offsets)
const F_HASH: usize = 0; // FNV-1a over the code units, as the scanner reports it
const F_LEN: usize = 4; // code units; 0 = empty slot
const F_ID: usize = 8; // term id; STOP; UNASSIGNED after resetIds
const F_ENTRY: usize = 12; // entry number, for resolve
const F_POOL: usize = 16; // pool offset (in code units) of the units past the inline ones
const F_KEY: usize = 20; // the first INLINE code units, zero-padded
const INLINE: u32 = 6;
const STOP: i32 = -1;
const UNASSIGNED: i32 = -2;
const INITIAL_SLOTS: u32 = 1 << 15;
const MAX_REGION_BYTES: u64 = 3 << 30; // no one region may need more (the module addresses 4 GB)
const SAMPLE_EVERY: u32 = 1024; // run-files.ts SAMPLE_EVERY

let slots: usize = 0;
let mask: u32 = 0;
let capacity: u32 = 0; // entries before the table doubles (half its slots)
let entries: u32 = 0;
let maxEntries: u32 = 0;
let kpool: usize = 0; // code units of keys longer than INLINE
let kpoolCap: u32 = 0; // in code units
let kpoolUsed: u32 = 0;

let text: usize = 0; // the batch's code units, end to end (+ 16 bytes of padding)
let textCap: u32 = 0; // in code units
let spans: usize = 0; // (start, len, hash) per word; start is relative to its chunk's text
let spansCap: u32 = 0; // in words
let docs: usize = 0; // per chunk: text start (units), end of its words (index), tokens out
let docsCap: u32 = 0;

let scratch: usize = 0; // count per term id within the current chunk
let touched: usize = 0; // term ids seen in the current chunk, in first-seen order
let scratchCap: u32 = 0;
let touchedN: u32 = 0;

// the term table: a normalised term's code units → its id (ids are dense, in order of first sight)
const TSLOT: usize = 16;
const T_HASH: usize = 0;
const T_LEN: usize = 4; // code units; 0 = empty slot
const T_POOL: usize = 8; // tpool offset (in code units) of the term
const T_ID: usize = 12;
let tslots: usize = 0;
let tmask: u32 = 0;
let tcapacity: u32 = 0;
let tcount: u32 = 0;
let tpool: usize = 0;
let tpoolCap: u32 = 0; // in code units
let tpoolUsed: u32 = 0;
let tscratch: usize = 0; // where the caller writes the term termOf numbers
let tscratchCap: u32 = 0; // in code units

// Each term's postings of the current run are kept encoded, as the run record
// will hold them (varint gap·2 + [tf == 1], then tf when it is not 1; the
// first gap from 0), in a chain of slices in `pool`: 8 bytes of header (the
// next slice's offset, the bytes used) and 16, 32, … up to 8 KB of data. A
// spill copies the slices into records; nothing is grouped or re-encoded.
// Term state, 32 bytes per term id:
const STATE: usize = 32;
const S_HEAD: usize = 0; // pool offset of the first slice; 0 = no postings in this run
const S_CUR: usize = 4; // the slice being written
const S_END: usize = 8; // end of its data
const S_TAIL: usize = 12; // where the next posting goes
const S_LAST: usize = 16; // the last chunk number (the next gap's base)
const S_DF: usize = 20; // postings in this run
const S_POOL: usize = 24; // tpool offset of the term's code units
const S_LEN: usize = 28; // and their number
const FIRST_SLICE: u32 = 16;
const MAX_SLICE: u32 = 8192;
const MAX_POSTING_BYTES: u32 = 10; // two 5-byte varints
let tstate: usize = 0;
let tstateCap: u32 = 0; // in terms
let pool: usize = 0; // slices; offset 0 is never a slice (it means "none")
let poolCap: u32 = 0;
let poolUsed: u32 = 0;
let pCap: u32 = 0; // postings held before the caller must spill
let pN: u32 = 0;

// The vocabulary in term order (UTF-16 code-unit order, as compareTerms in
// term-sort.ts): the ids of terms [0, sortedN), kept from one run to the next
// so that a spill sorts only the terms new since the last one (orderTerms).
// Sorting works on 16-byte keys (tpool offset, length, id).
const KEY: usize = 16;
const INSERTION_BELOW: u32 = 12;
let sorted: usize = 0;
let sortedCap: u32 = 0;
let sortedN: u32 = 0;

// a run being written: records go to `out` (the caller writes it to the file
// between calls); every SAMPLE_EVERY-th record's term id and offset in `out`
// go to `samples`
let out: usize = 0;
let outCap: u32 = 0;
let outLen: u32 = 0;
let samples: usize = 0;
let samplesCap: u32 = 0; // records `samples` has room for
let samplesN: u32 = 0;
let records: u32 = 0;
let touchSum: u32 = 0;

/** Sets up an empty counter: at most `maxPostings` postings held before the caller spills, a table cleared past `tableEntries`. */
/** `outBytes`: the run buffer `writeRecords` fills between the caller's writes (grown for a larger record). */
export function init(maxPostings: u32, tableEntries: u32, outBytes: u32): void {
  checkBytes(maxPostings, 12);
  maxEntries = min(tableEntries, 1 << 26); // a table of 2^27 slots (4 GB) could not be held anyway
  allocSlots(INITIAL_SLOTS);
  allocTermSlots(INITIAL_SLOTS);
  tpoolCap = 1 << 16;
  tpool = heap.alloc(<usize>tpoolCap * 2);
  tscratchCap = 1024;
  tscratch = heap.alloc(<usize>tscratchCap * 2);
  kpoolCap = 1 << 16;
  kpool = heap.alloc(<usize>kpoolCap * 2);
  scratchCap = 1 << 16;
  scratch = zeroed(<usize>scratchCap * 4);
  touched = heap.alloc(<usize>scratchCap * 4);
  pCap = maxPostings;
  tstateCap = 1 << 15;
  tstate = zeroed(<usize>tstateCap * STATE);
  poolCap = 1 << 22;
  pool = heap.alloc(<usize>poolCap);
  poolUsed = 8;
  outCap = max(outBytes, 16);
  out = heap.alloc(<usize>outCap);
}

/** Room for a batch of `units` code units, `words` words and `chunks` chunks; the layout pointers follow. */
export function reserve(units: u32, words: u32, chunks: u32): void {
  checkBytes(units, 2);
  checkBytes(words, 12);
  checkBytes(chunks, 12);
  if (units > textCap) {
    if (text) heap.free(text);
    textCap = grownCap(textCap, units);
    text = heap.alloc(<usize>textCap * 2 + 16);
  }
  if (words > spansCap) {
    if (spans) heap.free(spans);
    spansCap = grownCap(spansCap, words);
    spans = heap.alloc(<usize>spansCap * 12);
  }
  if (chunks > docsCap) {
    if (docs) heap.free(docs);
    docsCap = grownCap(docsCap, chunks);
    docs = heap.alloc(<usize>docsCap * 12);
  }
}

/** Makes room for `words` words, keeping the ones already written (the caller's scan outgrew `reserve`'s estimate). */
export function growSpans(words: u32): void {
  if (words <= spansCap) return;
  checkBytes(words, 12);
  spans = heap.realloc(spans, <usize>words * 12);
  spansCap = words;
}

export function textPtr(): usize {
  return text;
}
export function spansPtr(): usize {
  return spans;
}
export function spansCapacity(): u32 {
  return spansCap;
}
export function docsPtr(): usize {
  return docs;
}
export function outPtr(): usize {
  return out;
}
export function outLength(): u32 {
  return outLen;
}
export function samplesPtr(): usize {
  return samples;
}
export function samplesLength(): u32 {
  return samplesN;
}
export function postings(): u32 {
  return pN;
}

/** Forgets the postings held (after the caller spilled them). */
export function clearPostings(): void {
  const end = tstate + <usize>tcount * STATE;
  for (let st = tstate; st < end; st += STATE) if (load<u32>(st + S_HEAD) != 0) clearState(st);
  pN = 0;
  poolUsed = 8;
}

// @ts-ignore: decorator
@inline
function clearState(st: usize): void {
  store<u64>(st + S_HEAD, 0);
  store<u64>(st + S_END, 0);
  store<u64>(st + S_LAST, 0);
}

/**
 * Starts a run: puts every term in term order (orderTerms) and makes room
 * for the run's samples. Returns the number of terms its records may come
 * from.
 */
export function beginRun(): u32 {
  const terms = orderTerms();
  if (terms > samplesCap) {
    if (samples) heap.free(samples);
    samplesCap = grownCap(samplesCap, terms);
    samples = heap.alloc(<usize>(samplesCap / SAMPLE_EVERY + 2) * 8);
  }
  records = 0;
  return terms;
}

/**
 * Puts every term id in term order: the terms numbered since the last call
 * (or since resetIds) are sorted by their code units (a multikey quicksort:
 * each partition step reads one unit of each term, so terms that share long
 * prefixes, as generated and real vocabularies do, are not compared from
 * their start again and again) and merged into the order kept from before.
 * Returns the number of terms ordered.
 */
function orderTerms(): u32 {
  const from = sortedN;
  const n = tcount - from;
  if (n == 0) return tcount;
  checkBytes(tcount, 4);
  checkBytes(n, <u32>KEY);
  // the keys live only for this call: freed after it, their room serves the next growth of any region
  const keys = heap.alloc(<usize>n * KEY);
  for (let i: u32 = 0; i < n; i++) {
    const st = tstate + <usize>(from + i) * STATE;
    const k = keys + <usize>i * KEY;
    store<u32>(k, load<u32>(st + S_POOL));
    store<u32>(k, load<u32>(st + S_LEN), 4);
    store<u32>(k, from + i, 8);
  }
  sortKeys(keys, n, 0);
  if (tcount > sortedCap) {
    const cap = grownCap(sortedCap, tcount);
    sorted = moved(sorted, sortedN, cap, 4, false);
    sortedCap = cap;
  }
  // merge from the back, in place: the kept order's ids move up as far as the new terms before them
  let i = <i64>from - 1;
  let j = <i64>n - 1;
  let o = <i64>tcount - 1;
  while (j >= 0) {
    const k = keys + <usize>j * KEY;
    if (i >= 0) {
      const old = load<u32>(sorted + <usize>i * 4);
      const st = tstate + <usize>old * STATE;
      if (compareUnits(load<u32>(st + S_POOL), load<u32>(st + S_LEN), load<u32>(k), load<u32>(k, 4), 0) > 0) {
        store<u32>(sorted + <usize>o * 4, old);
        i--;
        o--;
        continue;
      }
    }
    store<u32>(sorted + <usize>o * 4, load<u32>(k, 8));
    j--;
    o--;
  }
  heap.free(keys);
  sortedN = tcount;
  return tcount;
}

/** Code unit `d` of the key at `k`, plus 1; 0 past its end (a prefix sorts first). */
// @ts-ignore: decorator
@inline
function unitAt(k: usize, d: u32): u32 {
  return d < load<u32>(k, 4) ? <u32>load<u16>(tpool + (<usize>load<u32>(k) + <usize>d) * 2) + 1 : 0;
}

/** Code-unit order of two terms (tpool offset and length each) that agree on their first `d` units. */
function compareUnits(pa: u32, la: u32, pb: u32, lb: u32, d: u32): i32 {
  const n = min(la, lb);
  const a = tpool + <usize>pa * 2;
  const b = tpool + <usize>pb * 2;
  for (let i = d; i < n; i++) {
    const x = <i32>load<u16>(a + <usize>i * 2);
    const y = <i32>load<u16>(b + <usize>i * 2);
    if (x != y) return x - y;
  }
  return <i32>la - <i32>lb;
}

// @ts-ignore: decorator
@inline
function swapKeys(a: usize, b: usize): void {
  const x0 = load<u64>(a);
  const x1 = load<u64>(a, 8);
  store<u64>(a, load<u64>(b));
  store<u64>(a, load<u64>(b, 8), 8);
  store<u64>(b, x0);
  store<u64>(b, x1, 8);
}

/**
 * Sorts the `n` keys at `a`, which agree on their first `d` units (multikey
 * quicksort, Bentley and Sedgewick 1997). Each step splits on unit `d` into
 * less, equal and greater; the two smaller parts are sorted by recursion
 * (each at most half the keys, so the depth stays under log2 n) and the
 * largest by the loop.
 */
function sortKeys(a: usize, n: u32, d: u32): void {
  while (n > 1) {
    if (n < INSERTION_BELOW) {
      for (let i: u32 = 1; i < n; i++) {
        for (let j = i; j > 0; j--) {
          const x = a + <usize>(j - 1) * KEY;
          const y = x + KEY;
          if (compareUnits(load<u32>(x), load<u32>(x, 4), load<u32>(y), load<u32>(y, 4), d) <= 0) break;
          swapKeys(x, y);
        }
      }
      return;
    }
    // pivot: the median unit of the first, middle and last keys
    const u0 = unitAt(a, d);
    const um = unitAt(a + <usize>(n >> 1) * KEY, d);
    const ul = unitAt(a + <usize>(n - 1) * KEY, d);
    const v = max(min(u0, um), min(max(u0, um), ul));
    let lt: u32 = 0;
    let i: u32 = 0;
    let gt: u32 = n; // keys [gt, n) are greater
    while (i < gt) {
      const k = a + <usize>i * KEY;
      const c = unitAt(k, d);
      if (c < v) {
        if (i != lt) swapKeys(a + <usize>lt * KEY, k);
        lt++;
        i++;
      } else if (c > v) {
        gt--;
        swapKeys(k, a + <usize>gt * KEY);
      } else {
        i++;
      }
    }
    const nLess = lt;
    const nEqual = gt - lt;
    const nGreater = n - gt;
    const less = a;
    const equal = a + <usize>lt * KEY;
    const greater = a + <usize>gt * KEY;
    // the equal part ends at unit d when v is 0: its keys are whole and alike, nothing left to sort
    const equalLeft: u32 = v == 0 ? 0 : nEqual;
    if (equalLeft >= nLess && equalLeft >= nGreater) {
      sortKeys(less, nLess, d);
      sortKeys(greater, nGreater, d);
      a = equal;
      n = equalLeft;
      d++;
    } else if (nLess >= nGreater) {
      if (equalLeft > 1) sortKeys(equal, equalLeft, d + 1);
      sortKeys(greater, nGreater, d);
      a = less;
      n = nLess;
    } else {
      if (equalLeft > 1) sortKeys(equal, equalLeft, d + 1);
      sortKeys(less, nLess, d);
      a = greater;
      n = nGreater;
    }
  }
}

/**
 * Writes the records of the term order's [from, to) that have postings (run record: u16
 * term bytes | term (UTF-8) | u32 df | u32 lastDoc | u32 nbytes | postings)
 * to `out` from its start, and forgets those terms' postings. Stops before a
 * record that would not fit after others and returns its index (the caller
 * writes `out` to the file and calls again from there); `to` when all were
 * written.
 */
export function writeRecords(from: u32, to: u32): u32 {
  outLen = 0;
  samplesN = 0;
  for (let i = from; i < to; i++) {
    const st = tstate + <usize>load<u32>(sorted + <usize>i * 4) * STATE;
    const head = load<u32>(st + S_HEAD);
    if (head == 0) continue;
    const cur = load<u32>(st + S_CUR);
    store<u32>(pool + <usize>cur + 4, load<u32>(st + S_TAIL) - cur - 8);
    let nbytes: u32 = 0;
    for (let s = head; s != 0; s = load<u32>(pool + <usize>s)) nbytes += load<u32>(pool + <usize>s + 4);
    const len = load<u32>(st + S_LEN);
    const need = <u64>2 + <u64>len * 3 + 12 + <u64>nbytes;
    if (<u64>outLen + need > <u64>outCap) {
      if (outLen > 0) return i;
      growOut(<u32>need);
    }
    if (records % SAMPLE_EVERY == 0) {
      store<u32>(samples + <usize>samplesN * 8, load<u32>(sorted + <usize>i * 4));
      store<u32>(samples + <usize>samplesN * 8, outLen, 4);
      samplesN++;
    }
    records++;
    const rec = out + <usize>outLen;
    const termBytes = utf8(tpool + <usize>load<u32>(st + S_POOL) * 2, len, rec + 2);
    store<u16>(rec, <u16>termBytes);
    const head12 = rec + 2 + termBytes;
    store<u32>(head12, load<u32>(st + S_DF));
    store<u32>(head12, load<u32>(st + S_LAST), 4);
    store<u32>(head12, nbytes, 8);
    let p = head12 + 12;
    for (let s = head; s != 0; s = load<u32>(pool + <usize>s)) {
      const used = load<u32>(pool + <usize>s + 4);
      memory.copy(p, pool + <usize>s + 8, used);
      p += used;
    }
    outLen += <u32>(p - rec);
    clearState(st);
  }
  return to;
}

/** Writes code units [at, at + len) as UTF-8 at `dst` (a lone surrogate as U+FFFD, as TextEncoder does); returns the bytes. */
function utf8(at: usize, len: u32, dst: usize): u32 {
  let n: usize = 0;
  for (let i: u32 = 0; i < len; i++) {
    let c = <u32>load<u16>(at + <usize>i * 2);
    if (c < 0x80) {
      store<u8>(dst + n++, <u8>c);
      continue;
    }
    if (c < 0x800) {
      store<u8>(dst + n++, <u8>(0xc0 | (c >> 6)));
      store<u8>(dst + n++, <u8>(0x80 | (c & 0x3f)));
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const lo = i + 1 < len ? <u32>load<u16>(at + <usize>(i + 1) * 2) : 0;
      if (c <= 0xdbff && lo >= 0xdc00 && lo <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
        store<u8>(dst + n++, <u8>(0xf0 | (cp >> 18)));
        store<u8>(dst + n++, <u8>(0x80 | ((cp >> 12) & 0x3f)));
        store<u8>(dst + n++, <u8>(0x80 | ((cp >> 6) & 0x3f)));
        store<u8>(dst + n++, <u8>(0x80 | (cp & 0x3f)));
        i++;
        continue;
      }
      c = 0xfffd;
    }
    store<u8>(dst + n++, <u8>(0xe0 | (c >> 12)));
    store<u8>(dst + n++, <u8>(0x80 | ((c >> 6) & 0x3f)));
    store<u8>(dst + n++, <u8>(0x80 | (c & 0x3f)));
  }
  return <u32>n;
}

function growOut(min: u32): void {
  checkBytes(min, 1);
  heap.free(out);
  outCap = grownCap(outCap, min);
  out = heap.alloc(<usize>outCap);
}

/** Empties the table once it holds `tableEntries` entries; returns 1 if it did (entry numbers restart at 0). */
export function clearIfFull(): u32 {
  if (entries < maxEntries) return 0;
  if (capacity > maxEntries) {
    // shrink back to the size the cap needs, as the table would have grown to it
    heap.free(slots);
    let n = INITIAL_SLOTS;
    while (n / 2 < maxEntries) n *= 2;
    allocSlots(n);
  } else {
    memory.fill(slots, 0, (<usize>mask + 1) * SLOT);
  }
  entries = 0;
  kpoolUsed = 0;
  return 1;
}

/** Forgets every term and unassigns every word form's term id (the caller started a new vocabulary); stopwords stay stopwords. */
export function resetIds(): void {
  const end = slots + (<usize>mask + 1) * SLOT;
  for (let b = slots; b < end; b += SLOT) {
    if (load<u32>(b + F_LEN) != 0 && load<i32>(b + F_ID) >= 0) store<i32>(b + F_ID, UNASSIGNED);
  }
  memory.fill(tslots, 0, (<usize>tmask + 1) * TSLOT);
  memory.fill(tstate, 0, <usize>tcount * STATE);
  tcount = 0;
  tpoolUsed = 0;
  sortedN = 0;
}

/** Where the caller writes a term of `len` UTF-16 code units for termOf (valid until the next call). */
export function termScratch(len: u32): usize {
  if (len > tscratchCap) {
    heap.free(tscratch);
    tscratchCap = grownCap(tscratchCap, len);
    checkBytes(tscratchCap, 2);
    tscratch = heap.alloc(<usize>tscratchCap * 2);
  }
  return tscratch;
}

/**
 * The id of the term of `len` code units at termScratch(len): its number in
 * order of first sight since the last resetIds, so a term seen for the first
 * time gets the number of terms seen before it.
 */
export function termOf(len: u32): u32 {
  if (len > tscratchCap) unreachable();
  let h: u32 = 0x811c9dc5;
  for (let i: u32 = 0; i < len; i++) h = (h ^ <u32>load<u16>(tscratch + <usize>i * 2)) * 0x01000193;
  for (;;) {
    let s = h & tmask;
    for (;;) {
      const b = tslots + <usize>s * TSLOT;
      const l = load<u32>(b + T_LEN);
      if (l == 0) break;
      if (
        l == len &&
        load<u32>(b + T_HASH) == h &&
        memory.compare(tpool + <usize>load<u32>(b + T_POOL) * 2, tscratch, <usize>len * 2) == 0
      ) {
        return load<u32>(b + T_ID);
      }
      s = (s + 1) & tmask;
    }
    if (tcount >= tcapacity) {
      growTerms();
      continue;
    }
    if (tpoolUsed + len > tpoolCap) growTermPool(len);
    if (tcount >= tstateCap) growStates();
    const st = tstate + <usize>tcount * STATE;
    store<u32>(st + S_POOL, tpoolUsed);
    store<u32>(st + S_LEN, len);
    const b = tslots + <usize>s * TSLOT;
    store<u32>(b + T_HASH, h);
    store<u32>(b + T_LEN, len);
    store<u32>(b + T_POOL, tpoolUsed);
    store<u32>(b + T_ID, tcount);
    memory.copy(tpool + <usize>tpoolUsed * 2, tscratch, <usize>len * 2);
    tpoolUsed += len;
    return tcount++;
  }
}

/**
 * Counts chunks [from, to) of the batch, numbering them first + index, and
 * appends their postings. Returns the index of the first chunk not counted:
 * `to` when all were, less when the postings would overflow (the caller
 * spills, calls clearPostings and continues from there).
 */
export function count(from: u32, to: u32, first: u32): u32 {
  for (let d = from; d < to; d++) {
    const rec = docs + <usize>d * 12;
    const w0: u32 = d == 0 ? 0 : load<u32>(rec - 12, 4);
    const w1 = load<u32>(rec, 4);
    const words = w1 - w0;
    if (pN > 0 && pN + words > pCap) return d;
    if (words > pCap) growPostings(words);
    touch(w0, w1);
    const base = text + <usize>load<u32>(rec) * 2;
    let tokens: u32 = 0;
    for (let i = w0; i < w1; i++) {
      const sp = spans + <usize>i * 12;
      const start = load<u32>(sp);
      const len = load<u32>(sp, 4);
      const b = lookup(base, start, len, load<u32>(sp, 8), d);
      let id = load<i32>(b + F_ID);
      if (id == UNASSIGNED) {
        id = resolve(load<u32>(b + F_ENTRY), d, start, len);
        store<i32>(b + F_ID, id);
      }
      if (id < 0) continue;
      tokens++;
      if (<u32>id >= scratchCap) growScratch(<u32>id);
      const c = scratch + <usize>id * 4;
      const k = load<u32>(c);
      if (k == 0) {
        store<u32>(touched + <usize>touchedN * 4, id);
        touchedN++;
      }
      store<u32>(c, k + 1);
    }
    const num = first + d;
    for (let t: u32 = 0; t < touchedN; t++) {
      const id = load<u32>(touched + <usize>t * 4);
      const c = scratch + <usize>id * 4;
      append(tstate + <usize>id * STATE, num, load<u32>(c));
      store<u32>(c, 0);
    }
    pN += touchedN;
    touchedN = 0;
    store<u32>(rec, tokens, 8);
  }
  return to;
}

/** Appends posting (num, tf) to the term whose state is at `st`. */
// @ts-ignore: decorator
@inline
function append(st: usize, num: u32, tf: u32): void {
  let tail = load<u32>(st + S_TAIL);
  if (tail + MAX_POSTING_BYTES > load<u32>(st + S_END)) tail = nextSlice(st);
  let p = pool + <usize>tail;
  let v = (num - load<u32>(st + S_LAST)) * 2 + (tf == 1 ? 1 : 0);
  while (v >= 0x80) {
    store<u8>(p++, <u8>(v | 0x80));
    v >>= 7;
  }
  store<u8>(p++, <u8>v);
  if (tf != 1) {
    v = tf;
    while (v >= 0x80) {
      store<u8>(p++, <u8>(v | 0x80));
      v >>= 7;
    }
    store<u8>(p++, <u8>v);
  }
  store<u32>(st + S_TAIL, <u32>(p - pool));
  store<u32>(st + S_LAST, num);
  store<u32>(st + S_DF, load<u32>(st + S_DF) + 1);
}

/** Starts the term's next slice (its first, when it has none), twice the size of the last; returns where its data starts. */
function nextSlice(st: usize): u32 {
  const cur = load<u32>(st + S_CUR);
  const head = load<u32>(st + S_HEAD);
  const size = head == 0 ? FIRST_SLICE : min(MAX_SLICE, (load<u32>(st + S_END) - cur - 8) * 2);
  if (<u64>poolUsed + 8 + <u64>size > <u64>poolCap) growPool(8 + size);
  const s = poolUsed;
  poolUsed += 8 + size;
  store<u32>(pool + <usize>s, 0);
  if (head == 0) store<u32>(st + S_HEAD, s);
  else {
    store<u32>(pool + <usize>cur, s);
    store<u32>(pool + <usize>cur + 4, load<u32>(st + S_TAIL) - cur - 8);
  }
  store<u32>(st + S_CUR, s);
  store<u32>(st + S_END, s + 8 + size);
  return s + 8;
}

/**
 * Reads the home slot of each word before any is looked up: the loads are
 * independent, so the CPU overlaps their cache misses (as SpanInterner.touch
 * did for the TypeScript table).
 */
function touch(w0: u32, w1: u32): void {
  let sum: u32 = 0;
  for (let i = w0; i < w1; i++) sum ^= load<u32>(slots + <usize>(load<u32>(spans + <usize>i * 12, 8) & mask) * SLOT);
  touchSum ^= sum;
}

/** The slot of code units key[start, start + len) (chunk `doc`), created (and resolved) on first sight. */
function lookup(base: usize, start: u32, len: u32, h: u32, doc: u32): usize {
  const key = base + <usize>start * 2;
  // the inline units as two words, zero past the key (the text is padded, so reading past it is safe)
  const k0 = load<u64>(key) & unitMask64(len);
  const k1 = len > 4 ? load<u32>(key, 8) & unitMask32(len - 4) : 0;
  for (;;) {
    let s = h & mask;
    for (;;) {
      const b = slots + <usize>s * SLOT;
      const l = load<u32>(b + F_LEN);
      if (l == 0) break;
      if (l == len && load<u32>(b + F_HASH) == h && load<u64>(b + F_KEY) == k0 && load<u32>(b + F_KEY + 8) == k1) {
        if (len <= INLINE) return b;
        if (memory.compare(kpool + <usize>load<u32>(b + F_POOL) * 2, key + INLINE * 2, <usize>(len - INLINE) * 2) == 0) {
          return b;
        }
      }
      s = (s + 1) & mask;
    }
    if (entries >= capacity) {
      grow();
      continue;
    }
    const b = slots + <usize>s * SLOT;
    store<u32>(b + F_HASH, h);
    store<u32>(b + F_LEN, len);
    store<u32>(b + F_ENTRY, entries);
    store<u64>(b + F_KEY, k0);
    store<u32>(b + F_KEY + 8, k1);
    if (len > INLINE) {
      const rest = len - INLINE;
      if (kpoolUsed + rest > kpoolCap) growKeyPool(rest);
      memory.copy(kpool + <usize>kpoolUsed * 2, key + INLINE * 2, <usize>rest * 2);
      store<u32>(b + F_POOL, kpoolUsed);
      kpoolUsed += rest;
    }
    const id = resolve(entries, doc, start, len);
    entries++;
    store<i32>(b + F_ID, id);
    return b;
  }
}

// @ts-ignore: decorator
@inline
function unitMask64(units: u32): u64 {
  return units >= 4 ? 0xffffffffffffffff : (<u64>1 << (<u64>units * 16)) - 1;
}

// @ts-ignore: decorator
@inline
function unitMask32(units: u32): u32 {
  return units >= 2 ? 0xffffffff : 0xffff;
}

function allocSlots(n: u32): void {
  checkBytes(n, <u32>SLOT);
  slots = zeroed(<usize>n * SLOT);
  mask = n - 1;
  capacity = n / 2;
}

/** Doubles the table, rehashing every entry (ids and entry numbers move with their slots). */
function grow(): void {
  const old = slots;
  const n = mask + 1;
  allocSlots(n * 2);
  rehash(old, n, slots, mask, SLOT, F_LEN, F_HASH);
}

function allocTermSlots(n: u32): void {
  checkBytes(n, <u32>TSLOT);
  tslots = zeroed(<usize>n * TSLOT);
  tmask = n - 1;
  tcapacity = n / 2;
}

/** Doubles the term table, rehashing every term. */
function growTerms(): void {
  const old = tslots;
  const n = tmask + 1;
  allocTermSlots(n * 2);
  rehash(old, n, tslots, tmask, TSLOT, T_LEN, T_HASH);
}

/**
 * Moves the used slots (a non-zero u32 at `fLen`) of the `n` slots of `size` bytes at `from`
 * into the empty table at `to` by linear probing on the hash at `fHash`, and frees `from`: the
 * growth of the word table and of the term table.
 */
function rehash(from: usize, n: u32, to: usize, toMask: u32, size: usize, fLen: usize, fHash: usize): void {
  const end = from + <usize>n * size;
  for (let ob = from; ob < end; ob += size) {
    if (load<u32>(ob + fLen) == 0) continue;
    let s = load<u32>(ob + fHash) & toMask;
    while (load<u32>(to + <usize>s * size + fLen) != 0) s = (s + 1) & toMask;
    memory.copy(to + <usize>s * size, ob, size);
  }
  heap.free(from);
}

function growTermPool(min: u32): void {
  const cap = grownCap(tpoolCap, tpoolUsed + min);
  tpool = moved(tpool, tpoolUsed, cap, 2, false);
  tpoolCap = cap;
}

function growKeyPool(min: u32): void {
  const cap = grownCap(kpoolCap, kpoolUsed + min);
  kpool = moved(kpool, kpoolUsed, cap, 2, false);
  kpoolCap = cap;
}

/** Grows the slice pool (slices are addressed by offset, so it may move). */
function growPool(min: u32): void {
  const cap = grownCap(poolCap, poolUsed + min);
  checkBytes(cap, 1);
  pool = heap.realloc(pool, <usize>cap);
  poolCap = cap;
}

function growStates(): void {
  const cap = grownCap(tstateCap, tcount + 1);
  tstate = moved(tstate, tcount, cap, <u32>STATE, true);
  tstateCap = cap;
}

function growScratch(id: u32): void {
  const cap = grownCap(scratchCap, id + 1);
  scratch = moved(scratch, scratchCap, cap, 4, true);
  touched = moved(touched, touchedN, cap, 4, false);
  scratchCap = cap;
}

/** A chunk with more words than the postings budget: the budget grows to hold it alone. */
function growPostings(words: u32): void {
  checkBytes(words, MAX_POSTING_BYTES);
  pCap = words;
}

/**
 * Traps (the caller reports it as out of memory) when `count` items of `size` bytes could not be
 * allocated: sizes are 32-bit here, and a product past 3 GB would wrap or fail to grow memory.
 */
function checkBytes(count: u32, size: u32): void {
  if (<u64>count * <u64>size > MAX_REGION_BYTES) unreachable();
}

function grownCap(cap: u32, min: u32): u32 {
  if (min > 0x80000000) unreachable();
  let n = cap > 0 ? cap : 1024;
  while (n < min) n *= 2;
  return n;
}

/**
 * A new region of `cap` items of `size` bytes holding the first `keep` items of `old` (freed),
 * the rest zeroed when `zero`: the growth of every region whose contents stay in place.
 */
function moved(old: usize, keep: u32, cap: u32, size: u32, zero: bool): usize {
  checkBytes(cap, size);
  const bytes = <usize>cap * size;
  const kept = <usize>keep * size;
  const next = heap.alloc(bytes);
  memory.copy(next, old, kept);
  if (zero) memory.fill(next + kept, 0, bytes - kept);
  heap.free(old);
  return next;
}

function zeroed(bytes: usize): usize {
  const p = heap.alloc(bytes);
  memory.fill(p, 0, bytes);
  return p;
}

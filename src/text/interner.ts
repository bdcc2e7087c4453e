import { ownString } from './own-string.js';
import { hashSpan } from './word-scanner.js';

/**
 * A cache from raw word spans of a text to their analyzed term, keyed by the
 * characters themselves (FNV-1a over UTF-16 code units, open addressing), so
 * the hot path allocates nothing. Each entry also carries an integer a
 * consumer may assign (the BM25 builder's term id). Bounded: callers invoke
 * `clearIfFull()` between texts (never inside one); clearing only costs
 * recomputation, since an entry is a pure function of its key.
 *
 * Layout: on a large vocabulary every rare word is a cache miss at each array
 * it touches, which made lookups 3× slower than on a cached table. So one
 * 32-byte slot holds everything a lookup and its consumer read: the hash, the
 * entry number, the length and stopword flag, the consumer id and the first
 * six characters of the key (longer keys keep the rest in a character pool).
 * A lookup that hits reads one cache line.
 *
 * `intern` returns a handle: the slot. Handles stay valid until the table
 * grows, which changes `epoch`; a caller holding handles across calls (as
 * `analyzeInto` does for a whole text) checks the epoch and starts over.
 */
// Tables start small and double as entries arrive: a table sized to its
// vocabulary stays in the CPU caches.
const INITIAL_ENTRIES = 1 << 14;
const SLOT = 8; // int32s per slot
const F_HASH = 0;
const F_ENTRY = 1; // entry number + 1; 0 = empty slot
const F_LEN = 2; // key length | stopword flag in bit 31
const F_ID = 3; // consumer id, -1 = unassigned
const F_POOL = 4; // pool offset of key characters past the inline ones
const F_KEY = 5; // inline key: 2 UTF-16 code units per int32
const INLINE_CHARS = 2 * (SLOT - F_KEY);
const STOP_BIT = 1 << 31;

export class SpanInterner {
  private slots!: Int32Array;
  private mask = 0;
  private capacity = 0; // entries before the table doubles (half its slots)
  private pool = new Uint16Array(1 << 16);
  private poolUsed = 0;
  private count = 0;
  /** Bumped whenever handles change (the table grew or was cleared). */
  epoch = 0;
  /** Terms by entry number (see `termOf`). */
  private terms: Array<string | null> = [];

  constructor(
    private readonly normalize: (raw: string) => string | null,
    readonly maxEntries = 1 << 20,
  ) {
    this.allocate(Math.min(maxEntries, INITIAL_ENTRIES));
  }

  get size(): number {
    return this.count;
  }

  /** Handle of text[start, end); creates the entry on first sight. */
  intern(text: string, start: number, end: number): number {
    return this.internHashed(text, start, end, hashSpan(text, start, end));
  }

  /** `intern` with the span's hash already known (`hash` must be hashSpan(text, start, end), as scanWords reports). */
  internHashed(text: string, start: number, end: number, h: number): number {
    const len = end - start;
    const inline = len < INLINE_CHARS ? len : INLINE_CHARS;
    const slots = this.slots;
    const mask = this.mask;
    let slot = h & mask;
    for (;;) {
      const b = slot * SLOT;
      if (slots[b + F_ENTRY] === 0) break;
      if (slots[b + F_HASH] === h && ((slots[b + F_LEN] as number) & ~STOP_BIT) === len) {
        let i = 0;
        for (; i + 1 < inline; i += 2) {
          const pair = text.charCodeAt(start + i) | (text.charCodeAt(start + i + 1) << 16);
          if (slots[b + F_KEY + (i >> 1)] !== pair) break;
        }
        if (i + 1 >= inline && (i === inline || slots[b + F_KEY + (i >> 1)] === text.charCodeAt(start + i))) {
          if (len <= INLINE_CHARS) return slot;
          const pool = this.pool;
          const at = (slots[b + F_POOL] as number) - INLINE_CHARS;
          let j = INLINE_CHARS;
          while (j < len && pool[at + j] === text.charCodeAt(start + j)) j++;
          if (j === len) return slot;
        }
      }
      slot = (slot + 1) & mask;
    }
    if (this.count >= this.capacity) {
      this.grow();
      return this.internHashed(text, start, end, h);
    }
    const raw = this.normalize(text.slice(start, end));
    // cached past this text: it must not keep the text alive
    const term = raw === null ? null : ownString(raw);
    const b = slot * SLOT;
    slots[b + F_HASH] = h;
    slots[b + F_ENTRY] = ++this.count;
    slots[b + F_LEN] = term === null ? len | STOP_BIT : len;
    slots[b + F_ID] = -1;
    let i = 0;
    for (; i + 1 < inline; i += 2) {
      slots[b + F_KEY + (i >> 1)] = text.charCodeAt(start + i) | (text.charCodeAt(start + i + 1) << 16);
    }
    if (i < inline) slots[b + F_KEY + (i >> 1)] = text.charCodeAt(start + i);
    if (len > INLINE_CHARS) {
      if (this.poolUsed + len > this.pool.length) this.growPool(len);
      slots[b + F_POOL] = this.poolUsed;
      for (let j = INLINE_CHARS; j < len; j++) this.pool[this.poolUsed++] = text.charCodeAt(start + j);
    }
    this.terms.push(term);
    return slot;
  }

  /** The analyzed term of a handle; null for a stopword. */
  termOf(handle: number): string | null {
    return this.terms[(this.slots[handle * SLOT + F_ENTRY] as number) - 1] as string | null;
  }

  /** Whether the handle's term is null (a stopword): checked without touching `terms`. */
  isStop(handle: number): boolean {
    return ((this.slots[handle * SLOT + F_LEN] as number) & STOP_BIT) !== 0;
  }

  /** The consumer-assigned id of a handle; -1 = unassigned. */
  idOf(handle: number): number {
    return this.slots[handle * SLOT + F_ID] as number;
  }

  setId(handle: number, id: number): void {
    this.slots[handle * SLOT + F_ID] = id;
  }

  clearIfFull(): void {
    if (this.count >= this.maxEntries) this.clear();
  }

  clear(): void {
    if (this.capacity > this.maxEntries) this.allocate(this.maxEntries);
    else this.slots.fill(0);
    this.count = 0;
    this.poolUsed = 0;
    this.terms = [];
    this.epoch++;
  }

  /** Unassigns every entry's consumer id. */
  resetIds(): void {
    const slots = this.slots;
    for (let b = 0; b < slots.length; b += SLOT) slots[b + F_ID] = -1;
  }

  private allocate(entries: number): void {
    const n = nextPow2(entries * 2);
    this.slots = new Int32Array(n * SLOT);
    this.mask = n - 1;
    this.capacity = n / 2;
  }

  /** Doubles the slot table; every handle changes. */
  private grow(): void {
    const old = this.slots;
    this.allocate(this.capacity * 2);
    const slots = this.slots;
    for (let ob = 0; ob < old.length; ob += SLOT) {
      if (old[ob + F_ENTRY] === 0) continue;
      let slot = (old[ob + F_HASH] as number) & this.mask;
      while (slots[slot * SLOT + F_ENTRY] !== 0) slot = (slot + 1) & this.mask;
      // word by word: a subarray per entry allocated a view for each of up to 1M entries
      const nb = slot * SLOT;
      for (let f = 0; f < SLOT; f++) slots[nb + f] = old[ob + f] as number;
    }
    this.epoch++;
  }

  private growPool(min: number): void {
    const next = new Uint16Array(Math.max(this.pool.length * 2, this.poolUsed + min));
    next.set(this.pool.subarray(0, this.poolUsed));
    this.pool = next;
  }
}

function nextPow2(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

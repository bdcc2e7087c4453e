/**
 * A cache from raw word spans of a text to their analyzed term, keyed by the
 * characters themselves (FNV-1a over UTF-16 code units, open addressing; key
 * characters live in one Uint16Array pool), so the hot path allocates nothing
 * and touches few cache lines. Each entry also carries an integer a consumer
 * may assign (the BM25 builder's term id). Bounded: callers invoke
 * `clearIfFull()` between texts (never inside one, so entry indexes handed out
 * for a text stay valid); clearing only costs recomputation, since an entry is
 * a pure function of its key.
 */
// Tables start small and double as entries arrive: a table sized to its
// vocabulary stays in the CPU caches (a 2M-slot table at the maximum misses
// them on almost every lookup).
const INITIAL_ENTRIES = 1 << 14;

export class SpanInterner {
  private slots!: Int32Array; // entry index + 1, 0 = empty
  private mask = 0;
  private hashes!: Int32Array;
  private keyStart!: Int32Array;
  private keyLen!: Int32Array;
  private pool!: Uint16Array;
  private poolUsed = 0;
  private count = 0;
  terms: Array<string | null> = [];
  /** 1 where the entry's term is null (a stopword): checked without touching `terms`. */
  stop!: Uint8Array;
  /** Consumer-assigned ids per entry; -1 = unassigned. */
  ids!: Int32Array;

  constructor(
    private readonly normalize: (raw: string) => string | null,
    readonly maxEntries = 1 << 20,
  ) {
    this.allocate(Math.min(maxEntries, INITIAL_ENTRIES));
  }

  get size(): number {
    return this.count;
  }

  /** Entry index of text[start, end); creates the entry on first sight. */
  intern(text: string, start: number, end: number): number {
    let h = 0x811c9dc5 | 0;
    for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
    const len = end - start;
    const { slots, hashes, keyStart, keyLen, pool, mask } = this;
    let slot = h & mask;
    for (;;) {
      const e = slots[slot] as number;
      if (e === 0) break;
      const idx = e - 1;
      if (hashes[idx] === h && keyLen[idx] === len) {
        const ks = keyStart[idx] as number;
        let i = 0;
        while (i < len && pool[ks + i] === text.charCodeAt(start + i)) i++;
        if (i === len) return idx;
      }
      slot = (slot + 1) & mask;
    }
    if (this.count >= this.hashes.length || this.poolUsed + len > this.pool.length) {
      this.grow(len);
      return this.intern(text, start, end);
    }
    const idx = this.count++;
    hashes[idx] = h;
    keyStart[idx] = this.poolUsed;
    keyLen[idx] = len;
    for (let i = 0; i < len; i++) pool[this.poolUsed++] = text.charCodeAt(start + i);
    const term = this.normalize(text.slice(start, end));
    this.terms.push(term);
    this.stop[idx] = term === null ? 1 : 0;
    slots[slot] = idx + 1;
    return idx;
  }

  clearIfFull(): void {
    if (this.count >= this.maxEntries) this.clear();
  }

  clear(): void {
    if (this.hashes.length > this.maxEntries) this.allocate(this.maxEntries);
    else {
      this.slots.fill(0);
      this.ids.fill(-1);
    }
    this.count = 0;
    this.poolUsed = 0;
    this.terms = [];
  }

  resetIds(): void {
    this.ids.fill(-1, 0, this.count);
  }

  private allocate(entries: number): void {
    this.slots = new Int32Array(nextPow2(entries * 2));
    this.mask = this.slots.length - 1;
    this.hashes = new Int32Array(entries);
    this.keyStart = new Int32Array(entries);
    this.keyLen = new Int32Array(entries);
    this.ids = new Int32Array(entries).fill(-1);
    this.stop = new Uint8Array(entries);
    this.pool = new Uint16Array(entries * 8);
  }

  /** Doubles the tables (a single text with more new words than the soft limit). */
  private grow(minPool: number): void {
    const old = {
      hashes: this.hashes,
      keyStart: this.keyStart,
      keyLen: this.keyLen,
      ids: this.ids,
      stop: this.stop,
      pool: this.pool,
    };
    const entries = this.count >= this.hashes.length ? this.hashes.length * 2 : this.hashes.length;
    this.allocate(entries);
    this.hashes.set(old.hashes.subarray(0, this.count));
    this.keyStart.set(old.keyStart.subarray(0, this.count));
    this.keyLen.set(old.keyLen.subarray(0, this.count));
    this.ids.set(old.ids.subarray(0, this.count));
    this.stop.set(old.stop.subarray(0, this.count));
    if (this.pool.length < this.poolUsed + minPool || this.pool.length < old.pool.length) {
      this.pool = new Uint16Array(Math.max(old.pool.length * 2, this.poolUsed + minPool));
    }
    this.pool.set(old.pool.subarray(0, this.poolUsed));
    for (let idx = 0; idx < this.count; idx++) {
      let slot = (this.hashes[idx] as number) & this.mask;
      while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask;
      this.slots[slot] = idx + 1;
    }
  }
}

function nextPow2(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

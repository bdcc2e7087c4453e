/**
 * A least-recently-used map bounded by entries *and* by bytes. Every cache
 * whose keys or values a client shapes (queries, filters, result lists) is
 * one of these, so no request pattern can grow the heap past `maxBytes`: the
 * entry count alone bounded nothing, since one top-100 result list of long
 * passages weighs hundreds of KB (RELIABILITY.md "Memory").
 *
 * Sizes are estimates supplied by the caller (`sizeOf`), in bytes of heap;
 * an entry larger than the whole budget is not kept at all.
 */
export interface LruLimits {
  maxEntries: number;
  maxBytes: number;
}

export class BoundedLru<V> {
  private readonly map = new Map<string, { value: V; bytes: number }>();
  private total = 0;
  hits = 0;
  misses = 0;

  constructor(
    readonly limits: LruLimits,
    private readonly sizeOf: (key: string, value: V) => number,
  ) {}

  get(key: string): V | undefined {
    const e = this.map.get(key);
    if (e === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  /** Looks without counting a hit or a miss and without refreshing the entry. */
  has(key: string): boolean {
    return this.map.has(key);
  }

  set(key: string, value: V): void {
    this.delete(key);
    if (this.limits.maxEntries <= 0 || this.limits.maxBytes <= 0) return;
    const bytes = this.sizeOf(key, value);
    if (bytes > this.limits.maxBytes) return;
    this.map.set(key, { value, bytes });
    this.total += bytes;
    while (this.map.size > this.limits.maxEntries || this.total > this.limits.maxBytes) {
      this.delete(this.map.keys().next().value as string);
    }
  }

  delete(key: string): void {
    const e = this.map.get(key);
    if (e === undefined) return;
    this.map.delete(key);
    this.total -= e.bytes;
  }

  get size(): number {
    return this.map.size;
  }

  /** Estimated heap held by keys and values, bytes. */
  get bytes(): number {
    return this.total;
  }
}

/** Heap bytes of a JavaScript string, as V8 stores two-byte strings (the worst case). */
export function stringBytes(s: string): number {
  return 16 + 2 * s.length;
}

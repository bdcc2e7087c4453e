import { describeValue, RetrieverError } from '../errors.js';
import type { ChunkStore, FilterSpec } from '../store/chunk-store.js';
import type { ChunkFilter } from '../core/contracts.js';
import { BoundedLru, stringBytes, type LruLimits } from '../util/lru.js';

/**
 * Metadata filters for search: {source?, category?, published_after?,
 * published_before?, doc_id?}. Strings or lists of strings; source and
 * category match case-insensitively; dates are inclusive (a date-only
 * published_before includes that whole day). Applied inside both arms before
 * top-k. Values only ever reach SQL as bound parameters.
 */
export const FILTER_KEYS = ['source', 'category', 'published_after', 'published_before', 'doc_id'] as const;
const MAX_VALUES = 100;
const DATE_RE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

export interface ParsedFilter {
  spec: FilterSpec;
  /** Canonical text: equal filters have equal keys (result cache, filter cache). */
  key: string;
}

export function parseFilter(raw: unknown): ParsedFilter | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new RetrieverError('BAD_INPUT', `filter must be an object with any of ${FILTER_KEYS.join(', ')}`);
  }
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!(FILTER_KEYS as readonly string[]).includes(k)) {
      throw new RetrieverError('BAD_INPUT', `unknown filter key "${k.slice(0, 40)}": use ${FILTER_KEYS.join(', ')}`);
    }
  }
  const spec: FilterSpec = {};
  const list = (k: 'source' | 'category' | 'doc_id'): void => {
    const v = o[k];
    if (v === undefined || v === null) return;
    const arr = Array.isArray(v) ? v : [v];
    if (arr.length === 0 || arr.length > MAX_VALUES || !arr.every((x) => typeof x === 'string' && x.length <= 1024)) {
      throw new RetrieverError('BAD_INPUT', `filter.${k} must be a string or a list of 1-${MAX_VALUES} strings`);
    }
    const vals = [
      ...new Set(k === 'doc_id' ? (arr as string[]) : (arr as string[]).map((x) => x.toLowerCase())),
    ].sort();
    spec[k] = vals;
  };
  list('source');
  list('category');
  list('doc_id');
  for (const k of ['published_after', 'published_before'] as const) {
    const v = o[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string' || !DATE_RE.test(v) || Number.isNaN(Date.parse(v)) || !isCalendarDate(v)) {
      throw new RetrieverError(
        'BAD_INPUT',
        `filter.${k} must be a date like 2023-10-01 or 2023-10-01T12:00:00Z, got ${describeValue(v)}`,
      );
    }
    // a date-only upper bound includes that day: compare against the next midnight
    spec[k] = k === 'published_before' && v.length === 10 ? nextDay(v) : new Date(v).toISOString();
    if (k === 'published_before' && v.length === 10) spec.beforeExclusive = true;
  }
  // a date-only upper bound is exclusive of the next midnight, so an equal pair is empty too
  const after = spec.published_after;
  const before = spec.published_before;
  if (after && before && (after > before || (after === before && spec.beforeExclusive))) {
    throw new RetrieverError(
      'BAD_INPUT',
      'filter.published_after is later than filter.published_before: no date can match',
    );
  }
  if (Object.keys(spec).length === 0) return undefined;
  return { spec, key: JSON.stringify(spec) };
}

/** 2023-02-30 parses (as March 2): the day must exist in its month, and times must be in range. */
function isCalendarDate(v: string): boolean {
  const [y, m, d] = v.slice(0, 10).split('-').map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) return false;
  const time = /[T ](\d{2}):(\d{2})(?::(\d{2}))?/.exec(v);
  return !time || (Number(time[1]) < 24 && Number(time[2]) < 60 && Number(time[3] ?? 0) < 60);
}

function nextDay(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

/**
 * Resolves filters to chunk sets, remembering recent ones per corpus. Keys
 * come from clients and a set over wiki-18 weighs up to 2.6 MB of bits plus
 * 4 bytes a matching chunk, so the cache is bounded in bytes as well.
 */
export class FilterCache extends BoundedLru<ChunkFilter> {
  constructor(
    private readonly store: ChunkStore,
    private readonly chunkCount: number,
    limits: LruLimits = { maxEntries: 256, maxBytes: 64 * 2 ** 20 },
  ) {
    super(limits, (key, f) => stringBytes(key) + f.bits.byteLength + f.nums.byteLength + 200);
  }

  resolve(f: ParsedFilter): ChunkFilter {
    const hit = this.get(f.key);
    if (hit) return hit;
    const nums = this.store.filterChunkNums(f.spec);
    const bits = new Uint8Array(Math.ceil(this.chunkCount / 8));
    for (const n of nums) bits[n >>> 3] = (bits[n >>> 3] as number) | (1 << (n & 7));
    const out = { bits, nums };
    this.set(f.key, out);
    return out;
  }
}

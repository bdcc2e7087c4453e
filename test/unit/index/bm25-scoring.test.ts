import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteSink, decodePostings, encodePosting, readVarint } from '../../../src/index/bm25/postings-codec.js';
import { decodeLength, encodeLength, idf, lengthNormTable } from '../../../src/index/bm25/scoring.js';

describe('Lucene length quantisation', () => {
  it('is exact below 24 and keeps 4 significant bits above', () => {
    for (let i = 0; i < 24; i++) expect(decodeLength(encodeLength(i))).toBe(i);
    // values Lucene's SmallFloat.byte4ToInt produces around the switch-over
    expect(decodeLength(encodeLength(24))).toBe(24);
    expect(decodeLength(encodeLength(100))).toBe(96);
    expect(encodeLength(2 ** 31 - 1)).toBe(255);
  });

  it('is monotonic and never overstates a length by more than 1/8', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 10_000_000 }), (a, b) => {
        if (a <= b) expect(encodeLength(a)).toBeLessThanOrEqual(encodeLength(b));
        const d = decodeLength(encodeLength(a));
        expect(d).toBeLessThanOrEqual(a);
        expect(a - d).toBeLessThanOrEqual(a / 8 + 1);
      }),
    );
  });
});

describe('BM25 pieces', () => {
  it('idf is positive and falls as df rises', () => {
    expect(idf(1, 1000)).toBeGreaterThan(idf(10, 1000));
    expect(idf(1000, 1000)).toBeGreaterThan(0);
    expect(idf(1, 1000)).toBeCloseTo(Math.log(1 + 999.5 / 1.5), 12);
  });

  it('length norm table follows k1 (1 - b + b dl/avgdl)', () => {
    const t = lengthNormTable({ k1: 0.9, b: 0.4 }, 10);
    expect(t[10]).toBeCloseTo(0.9, 6);
    expect(t[0]).toBeCloseTo(0.9 * 0.6, 6);
  });
});

describe('postings codec', () => {
  it('round-trips ascending (doc, tf) lists', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 30_000_000 }), { maxLength: 300 }),
        fc.array(fc.integer({ min: 1, max: 100_000 }), { minLength: 300, maxLength: 300 }),
        (docsRaw, tfsRaw) => {
          const docs = [...docsRaw].sort((a, b) => a - b);
          const tfs = tfsRaw.slice(0, docs.length);
          const sink = new ByteSink(4);
          let prev = 0;
          docs.forEach((d, i) => {
            encodePosting(sink, d - prev, tfs[i] as number);
            prev = d;
          });
          const got = decodePostings(sink.view());
          expect({ docs: Array.from(got.docs), tfs: Array.from(got.tfs) }).toEqual({ docs, tfs });
        },
      ),
    );
  });

  it('readVarint reads LEB128 values past 32 bits, and where the next one starts', () => {
    /** LEB128 bytes of v, written with arithmetic that holds past 2^32 */
    const leb = (v: number): number[] => {
      const out: number[] = [];
      do {
        const low = v % 128;
        v = Math.floor(v / 128);
        out.push(v > 0 ? low | 0x80 : low);
      } while (v > 0);
      return out;
    };
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2 ** 49 }), { minLength: 1, maxLength: 20 }), (values) => {
        const bytes = Uint8Array.from(values.flatMap(leb));
        let pos = 0;
        for (const v of values) {
          const r = readVarint(bytes, pos);
          expect(r.value).toBe(v);
          pos = r.next;
        }
        expect(pos).toBe(bytes.length);
      }),
    );
    expect(readVarint(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x0f]), 0).value).toBe(2 ** 32 - 1);
  });
});

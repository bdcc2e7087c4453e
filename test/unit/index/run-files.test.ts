import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ByteSink } from '../../../src/index/bm25/postings-codec.js';
import { encodeList } from '../../../src/index/bm25/inverter.js';
import { FileWriter, RunReader, writeRunRecord, type RunRecord } from '../../../src/index/bm25/run-files.js';
import { makeTempDir } from '../../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

/** The record layout spelled out with Buffer's own writers: the reference `writeRunRecord` must match. */
function encodeRunRecord(rec: RunRecord): Uint8Array {
  const term = Buffer.from(rec.term, 'utf8');
  const out = Buffer.allocUnsafe(2 + term.length + 12 + rec.postings.length);
  out.writeUInt16LE(term.length, 0);
  term.copy(out, 2);
  let p = 2 + term.length;
  out.writeUInt32LE(rec.df, p);
  out.writeUInt32LE(rec.lastDoc, p + 4);
  out.writeUInt32LE(rec.postings.length, p + 8);
  p += 12;
  out.set(rec.postings, p);
  return out;
}

const term = fc.oneof(
  fc.string({ minLength: 1, maxLength: 30 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }),
  fc.constantFrom('café', '東京', '😀x', 'a'.repeat(255)),
);
const record = fc.record({
  term,
  df: fc.integer({ min: 1, max: 2 ** 32 - 1 }),
  lastDoc: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
  postings: fc.uint8Array({ maxLength: 300 }),
});

describe('run files', () => {
  it('read back every record as written: UTF-8 terms, 32-bit fields, postings bytes', () => {
    let k = 0;
    fc.assert(
      fc.property(fc.array(record, { maxLength: 40 }), (recs) => {
        const path = join(tmp.dir, `run${k++}`);
        const out = new FileWriter(path);
        for (const r of recs) out.write(encodeRunRecord(r));
        out.close();
        const reader = new RunReader(path);
        const back: RunRecord[] = [];
        for (let r = reader.next(); r !== null; r = reader.next()) back.push(r);
        reader.close();
        const plain = (r: RunRecord) => ({ ...r, postings: Array.from(r.postings) });
        expect(back.map(plain)).toEqual(recs.map(plain));
        // the record layout: u16 term bytes | term | u32 df | u32 lastDoc | u32 nbytes | postings
        const bytes = readFileSync(path);
        const expected = recs.reduce((s, r) => s + 2 + Buffer.byteLength(r.term) + 12 + r.postings.length, 0);
        expect(bytes.length).toBe(expected);
        expect(out.offset).toBe(expected);
      }),
      { numRuns: 200 },
    );
  });

  it("writes a record larger than the writer's buffer, and a lone surrogate as U+FFFD", () => {
    const path = join(tmp.dir, 'big');
    const out = new FileWriter(path);
    const postings = new Uint8Array(5 << 20).map((_, i) => i & 0xff);
    out.write(encodeRunRecord({ term: 'x\ud800', df: 7, lastDoc: 9, postings }));
    out.write(encodeRunRecord({ term: 'after', df: 1, lastDoc: 2, postings: Uint8Array.of(3) }));
    out.close();
    const reader = new RunReader(path);
    const big = reader.next();
    expect(big?.term).toBe(Buffer.from('x\ud800').toString('utf8'));
    expect(big?.postings.length).toBe(postings.length);
    expect(Buffer.from(big?.postings ?? []).equals(Buffer.from(postings))).toBe(true);
    const after = reader.next();
    expect(after && { ...after, postings: Array.from(after.postings) }).toEqual({
      term: 'after',
      df: 1,
      lastDoc: 2,
      postings: [3],
    });
    expect(reader.next()).toBeNull();
    reader.close();
  });

  it('writeRunRecord writes the bytes of encodeRunRecord over encodeList, lists bigger than the buffer included', () => {
    /** A posting list: ascending docs (gaps from 1 to 2^24), tf mostly 1. */
    const list = fc
      .array(
        fc.tuple(fc.integer({ min: 1, max: 2 ** 24 }), fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 2 ** 30 }))),
        {
          minLength: 1,
          maxLength: 60,
        },
      )
      .map((pairs) => {
        let doc = -1;
        const docs = Uint32Array.from(pairs, ([gap]) => (doc += gap));
        return { docs, tfs: Uint32Array.from(pairs, ([, tf]) => tf) };
      });
    let k = 0;
    const check = (lists: Array<{ term: string; docs: Uint32Array; tfs: Uint32Array }>): void => {
      const want = join(tmp.dir, `want${k}`);
      const got = join(tmp.dir, `got${k++}`);
      const a = new FileWriter(want);
      const b = new FileWriter(got);
      const sink = new ByteSink();
      for (const l of lists) {
        const lastDoc = encodeList(l.docs, l.tfs, sink);
        a.write(encodeRunRecord({ term: l.term, df: l.docs.length, lastDoc, postings: sink.view() }));
        // the writer takes a slice of shared arrays, as a spill does
        const pad = 3;
        const docs = new Uint32Array(l.docs.length + 2 * pad);
        docs.set(l.docs, pad);
        const tfs = new Uint32Array(l.tfs.length + 2 * pad);
        tfs.set(l.tfs, pad);
        writeRunRecord(b, l.term, docs, tfs, pad, pad + l.docs.length);
        expect(b.offset).toBe(a.offset);
      }
      a.close();
      b.close();
      expect(readFileSync(got).equals(readFileSync(want))).toBe(true);
    };
    fc.assert(
      fc.property(fc.array(fc.record({ term, list }), { maxLength: 30 }), (recs) =>
        check(recs.map((r) => ({ term: r.term, ...r.list }))),
      ),
      { numRuns: 200 },
    );
    // 1M postings with tf > 1 and large gaps: more than the 4 MiB buffer
    const n = 1 << 20;
    const docs = Uint32Array.from({ length: n }, (_, i) => i * 1000);
    const tfs = Uint32Array.from({ length: n }, (_, i) => 1 + (i % 3) * 100_000);
    check([
      { term: 'before', docs: docs.subarray(0, 5), tfs: tfs.subarray(0, 5) },
      { term: 'x\ud800', docs, tfs },
      { term: 'after', docs: docs.subarray(0, 1), tfs: tfs.subarray(0, 1) },
    ]);
  });
});

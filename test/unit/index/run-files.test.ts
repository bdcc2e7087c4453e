import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { FileWriter, RunReader, type RunRecord } from '../../../src/index/bm25/run-files.js';
import { makeTempDir } from '../../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

/** The record layout spelled out with Buffer's own writers (the term counter's tests check its records against it too). */
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
});

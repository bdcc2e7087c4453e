import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { Inverter } from '../../../src/index/bm25/inverter.js';
import { guarded } from '../../../src/index/bm25/term-counter.js';
import { mergeRuns } from '../../../src/index/bm25/merge.js';
import { decodePostings } from '../../../src/index/bm25/postings-codec.js';
import { FileWriter } from '../../../src/index/bm25/run-files.js';
import { createEnglishAnalyzer } from '../../../src/text/analyzer.js';
import { makeTempDir } from '../../helpers/paths.js';

const analyzer = createEnglishAnalyzer();
const tmp = makeTempDir();
afterAll(tmp.cleanup);

type Lists = Map<string, Array<[number, number]>>;

/** The postings the query path's analyzer implies: term → (chunk, tf) in chunk order, and each chunk's length. */
function naive(texts: readonly string[]): { lists: Lists; lengths: number[] } {
  const lists: Lists = new Map();
  const lengths = texts.map((text, doc) => {
    const terms = analyzer.analyze(text);
    const tf = new Map<string, number>();
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [t, n] of tf) {
      const list = lists.get(t) ?? [];
      list.push([doc, n]);
      lists.set(t, list);
    }
    return terms.length;
  });
  return { lists, lengths };
}

function sorted(lists: Lists): Array<[string, Array<[number, number]>]> {
  return [...lists].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Inverts `texts` in batches of `batch` and returns what the runs hold, merged, and each chunk's length. */
function invert(
  texts: readonly string[],
  opts: { batch: number; maxPostings: number; vocabularyCap: number; tableEntries: number },
  name: string,
): { lists: Lists; lengths: number[]; runs: number; postings: number } {
  const dir = join(tmp.dir, name);
  mkdirSync(dir, { recursive: true });
  const inverter = new Inverter(analyzer, opts.maxPostings, dir, 'r', opts.vocabularyCap, opts.tableEntries);
  const lengths: number[] = [];
  const counts = new Uint32Array(opts.batch);
  for (let s = 0; s < texts.length; s += opts.batch) {
    const batch = texts.slice(s, s + opts.batch);
    inverter.addBatch(s, batch, counts);
    lengths.push(...counts.subarray(0, batch.length));
  }
  inverter.spill();
  const out = new FileWriter(join(dir, 'merged'));
  const entries = [...mergeRuns(inverter.runs, out)];
  out.close();
  const bytes = readFileSync(join(dir, 'merged'));
  const lists: Lists = new Map();
  for (const e of entries) {
    const { docs, tfs } = decodePostings(bytes.subarray(e.offset, e.offset + e.nbytes), e.df);
    lists.set(
      e.term,
      Array.from(docs, (d, i) => [d, tfs[i] as number]),
    );
  }
  return { lists, lengths, runs: inverter.runs.length, postings: inverter.postings };
}

// words of every scanner class: letters, digits, joiners, accents, Han, astral letters, lone surrogates, stopwords
const word = fc.oneof(
  fc.constantFrom(
    'the',
    'The',
    'of',
    "John's",
    'u.s.a',
    '3.14',
    '1,000',
    'snake_case',
    'café',
    '北京',
    '𝐀𝐁',
    'x\ud800y',
  ),
  // the longest word indexed and one past it (dropped, as Lucene drops it)
  fc.constantFrom('k'.repeat(255), 'k'.repeat(256)),
  fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'é', 'A', '1', "'", '.'), minLength: 1, maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.integer({ min: 0, max: 300 }).map((n) => `w${n.toString(36)}ing`),
);
const text = fc.array(word, { maxLength: 40 }).map((ws) => ws.join(' '));

describe('BM25 term counter (WebAssembly)', () => {
  it('gives the postings and lengths of the query analyzer, through spills, table clears and vocabulary resets', () => {
    let k = 0;
    fc.assert(
      fc.property(
        fc.array(text, { minLength: 1, maxLength: 60 }),
        fc.record({
          batch: fc.integer({ min: 1, max: 16 }),
          maxPostings: fc.integer({ min: 1, max: 200 }),
          vocabularyCap: fc.integer({ min: 1, max: 100 }),
          tableEntries: fc.integer({ min: 1, max: 64 }),
        }),
        (texts, opts) => {
          const want = naive(texts);
          const got = invert(texts, opts, `p${k++}`);
          expect(got.lengths).toEqual(want.lengths);
          expect(sorted(got.lists)).toEqual(sorted(want.lists));
          expect(got.postings).toBe([...want.lists.values()].reduce((n, l) => n + l.length, 0));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('keeps apart word forms whose hashes collide and whose first six characters match', () => {
    // FNV-1a collisions over UTF-16 code units (the hash the scanner reports): same length, same first six characters
    const texts = ['prefix0tzla prefixn3apa prefix0tzla', 'prefixn3apa'];
    const got = invert(texts, { batch: 2, maxPostings: 100, vocabularyCap: 100, tableEntries: 100 }, 'collide');
    expect(sorted(got.lists)).toEqual(sorted(naive(texts).lists));
    expect(got.lists.get('prefix0tzla')).toEqual([[0, 2]]);
    expect(got.lists.get('prefixn3apa')).toEqual([
      [0, 1],
      [1, 1],
    ]);
  });

  it('grows its table past the initial size and its postings for a chunk larger than the budget', () => {
    // 40k distinct words (the table starts at 16k entries) in one chunk, against a budget of 1,000 postings
    const big = Array.from({ length: 40_000 }, (_, i) => `term${i.toString(36)}x`).join(' ');
    const texts = ['alpha beta', big, 'alpha term0x gamma'];
    const got = invert(texts, { batch: 3, maxPostings: 1_000, vocabularyCap: 1 << 20, tableEntries: 1 << 20 }, 'big');
    const want = naive(texts);
    expect(got.lengths).toEqual([2, 40_000, 3]);
    expect(got.lists.size).toBe(want.lists.size);
    expect(sorted(got.lists)).toEqual(sorted(want.lists));
    expect(got.runs).toBeGreaterThanOrEqual(2);
  });

  it('clamps a postings budget larger than the module can hold, with the same postings', () => {
    const texts = ['alpha beta', 'beta gamma beta'];
    const got = invert(texts, { batch: 2, maxPostings: 2 ** 31, vocabularyCap: 100, tableEntries: 100 }, 'clamp');
    expect(sorted(got.lists)).toEqual(sorted(naive(texts).lists));
  });

  it('grows the room for words past its estimate (a quarter of the code units) without losing any', () => {
    // 30k one-letter words in 60k code units: twice the estimate, in one batch
    const one = Array.from({ length: 30_000 }, (_, i) => String.fromCharCode(98 + (i % 25))).join(' ');
    const texts = [one, 'b c', one];
    const got = invert(texts, { batch: 3, maxPostings: 100_000, vocabularyCap: 100, tableEntries: 100 }, 'words');
    expect(got.lengths).toEqual([30_000, 2, 30_000]);
    expect(sorted(got.lists)).toEqual(sorted(naive(texts).lists));
  });

  it('names the fix when a batch cannot fit in the module, before it or inside it', () => {
    const big = 'word '.repeat(20_000_000); // 100M code units, shared by every element
    const fix = /ran out of memory \(a WebAssembly module addresses at most 4 GB.*--max-postings-in-memory/;
    // 1.1G code units: refused before anything is copied
    const a = new Inverter(analyzer, 1_000, tmp.dir, 'oom-a');
    expect(() => a.addBatch(0, Array<string>(11).fill(big), new Uint32Array(11))).toThrow(fix);
    // 900M code units: the module's memory cannot grow to the text and its words
    const b = new Inverter(analyzer, 1_000, tmp.dir, 'oom-b');
    expect(() => b.addBatch(0, Array<string>(9).fill(big), new Uint32Array(9))).toThrow(fix);
  });

  it("reports a trap of the module's size checks as that error", () => {
    // (module (func (export "trap") unreachable)): a real WebAssembly trap, as checkBytes raises
    const bytes = Uint8Array.from([
      0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00, 0x07,
      0x08, 0x01, 0x04, 0x74, 0x72, 0x61, 0x70, 0x00, 0x00, 0x0a, 0x05, 0x01, 0x03, 0x00, 0x00, 0x0b,
    ]);
    const wasm = (globalThis as unknown as { WebAssembly: { instantiateSync?: never } & Record<string, never> })
      .WebAssembly as unknown as {
      Module: new (b: Uint8Array) => object;
      Instance: new (m: object, i: object) => { exports: { trap: () => void } };
    };
    const { trap } = new wasm.Instance(new wasm.Module(bytes), {}).exports;
    expect(() => trap()).toThrow(/unreachable/);
    expect(() => guarded(trap)).toThrow(/ran out of memory .*--max-postings-in-memory/);
    // other errors pass through as they are
    expect(() =>
      guarded(() => {
        throw new TypeError('not a trap');
      }),
    ).toThrow(TypeError);
  });

  it('refuses chunks out of order', () => {
    const inverter = new Inverter(analyzer, 100, tmp.dir, 'order');
    inverter.add(5, 'alpha');
    expect(() => inverter.add(5, 'beta')).toThrow(/chunk 5 after 5/);
    expect(() => inverter.addBatch(3, ['beta', 'gamma'], new Uint32Array(2))).toThrow(/chunk 3 after 5/);
  });
});

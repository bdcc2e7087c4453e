import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { Inverter } from '../../../src/index/bm25/inverter.js';
import { MAX_TERM_UNITS, guarded } from '../../../src/index/bm25/term-counter.js';
import { mergeRuns } from '../../../src/index/bm25/merge.js';
import { decodePostings } from '../../../src/index/bm25/postings-codec.js';
import { compareTerms } from '../../../src/index/bm25/term-sort.js';
import {
  FileWriter,
  RunReader,
  SAMPLE_EVERY,
  type RunFile,
  type RunRecord,
} from '../../../src/index/bm25/run-files.js';
import type { Analyzer } from '../../../src/text/analyzer.js';
import { createEnglishAnalyzer } from '../../../src/text/analyzer.js';
import { heapGrowth } from '../../helpers/heap.js';
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
  opts: { batch: number; maxPostings: number; vocabularyCap: number; tableEntries: number; runBufferBytes?: number },
  name: string,
): { lists: Lists; lengths: number[]; runs: number; postings: number } {
  const dir = join(tmp.dir, name);
  mkdirSync(dir, { recursive: true });
  const inverter = new Inverter(
    analyzer,
    opts.maxPostings,
    dir,
    'r',
    opts.vocabularyCap,
    opts.tableEntries,
    opts.runBufferBytes,
  );
  const lengths: number[] = [];
  const counts = new Uint32Array(opts.batch);
  for (let s = 0; s < texts.length; s += opts.batch) {
    const batch = texts.slice(s, s + opts.batch);
    inverter.addBatch(s, batch, counts);
    lengths.push(...counts.subarray(0, batch.length));
  }
  inverter.spill();
  return { ...merged(inverter, dir), lengths, runs: inverter.runs.length, postings: inverter.postings };
}

/** The runs of `inverter` merged and decoded: term → (chunk, tf). */
function merged(inverter: Inverter, dir: string): { lists: Lists } {
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
  return { lists };
}

/** Every record of a run file in order, with its byte offset. */
function records(path: string): Array<RunRecord & { offset: number }> {
  const bytes = readFileSync(path);
  const reader = new RunReader(path);
  const out: Array<RunRecord & { offset: number }> = [];
  let offset = 0;
  for (let r = reader.next(); r !== null; r = reader.next()) {
    out.push({ ...r, postings: Uint8Array.from(r.postings), offset });
    offset += 2 + bytes.readUInt16LE(offset) + 12 + r.postings.length;
  }
  reader.close();
  expect(offset).toBe(bytes.length);
  return out;
}

/** An analyzer of the test's own: each space-separated word is a number, the index of its term in `terms`. */
function numberedAnalyzer(terms: readonly string[]): Analyzer {
  const fnv = (text: string, start: number, end: number): number => {
    let h = 0x811c9dc5;
    for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
    return h;
  };
  return {
    id: 'test-numbers/1',
    analyze: (text) => text.split(' ').map((w) => terms[Number(w)] as string),
    scanWords(text, emit) {
      let start = 0;
      for (let i = 0; i <= text.length; i++) {
        if (i === text.length || text[i] === ' ') {
          if (i > start) emit(start, i, fnv(text, start, i));
          start = i + 1;
        }
      }
    },
    normalize: (raw) => terms[Number(raw)] ?? null,
  };
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
          // run records handed over a few bytes at a time, and records larger than the buffer
          runBufferBytes: fc.integer({ min: 16, max: 512 }),
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

  it('encodes large term frequencies, large gaps between chunks and lists of many slices', () => {
    const dir = join(tmp.dir, 'wide');
    mkdirSync(dir, { recursive: true });
    const inverter = new Inverter(analyzer, 1 << 20, dir, 'r', 1 << 20, 1 << 20, 64);
    const want: Lists = new Map();
    const put = (term: string, num: number, tf: number): void => {
      const list = want.get(term) ?? [];
      list.push([num, tf]);
      want.set(term, list);
    };
    // tf of 300 (two varint bytes) and 70,000 (three), gaps up to 2^28 (five bytes once doubled)
    const nums = [0, 1, 127, 128, 16_383, 16_384, 2 ** 21, 2 ** 28, 2 ** 28 + 1, 2 ** 30];
    for (const num of nums) {
      inverter.add(num, `${'loud '.repeat(300)}${'quiet '.repeat(70_000)}once`);
      put('loud', num, 300);
      put('quiet', num, 70_000);
      put('onc', num, 1);
    }
    // one term in 20,000 chunks: its list runs through every slice size to the largest, many times
    let num = 2 ** 30 + 1;
    for (let i = 0; i < 20_000; i++) {
      num += 1 + (i % 700);
      inverter.add(num, i % 3 === 0 ? 'often often' : 'often');
      put('often', num, i % 3 === 0 ? 2 : 1);
    }
    inverter.spill();
    expect(inverter.runs).toHaveLength(1);
    expect(sorted(merged(inverter, dir).lists)).toEqual(sorted(want));
    const recs = records((inverter.runs[0] as RunFile).path);
    expect(recs.map((r) => [r.term, r.df, r.lastDoc])).toEqual([
      ['loud', nums.length, 2 ** 30],
      ['often', 20_000, num],
      ['onc', nums.length, 2 ** 30],
      ['quiet', nums.length, 2 ** 30],
    ]);
  });

  it("samples every SAMPLE_EVERY-th record of a run, at that record's offset", () => {
    const dir = join(tmp.dir, 'samples');
    mkdirSync(dir, { recursive: true });
    // a 100-byte buffer: the run is handed over in thousands of pieces, samples fall inside them
    const inverter = new Inverter(analyzer, 1 << 20, dir, 'r', 1 << 20, 1 << 20, 100);
    for (let i = 0; i < 400; i++) {
      inverter.add(i, Array.from({ length: 10 }, (_, j) => `t${(i * 10 + j).toString(36)}x`).join(' '));
    }
    inverter.spill();
    // a second run over fewer terms: the vocabulary is kept, the sample count restarts
    for (let i = 400; i < 450; i++) inverter.add(i, `t${i.toString(36)}x t${(i * 7).toString(36)}x`);
    inverter.spill();
    expect(inverter.runs).toHaveLength(2);
    for (const run of inverter.runs) {
      const recs = records(run.path);
      const want = recs.filter((_, i) => i % SAMPLE_EVERY === 0).map((r) => [r.term, r.offset]);
      expect(run.samples).toEqual(want);
      expect(run.bytes).toBe(readFileSync(run.path).length);
    }
    expect(inverter.runs[0]?.samples).toHaveLength(4); // 4,000 records
  });

  it("writes an analyzer's terms of any characters as UTF-8, a lone surrogate as U+FFFD", () => {
    // an analyzer of our own: each space-separated word is a number naming its term
    const terms = ['a', 'é', '東京', '𝐀𝐁', 'x\ud800', '\udc00y', 'é\ud83d', 'z'.repeat(255), '東'.repeat(255)];
    const own = numberedAnalyzer(terms);
    const dir = join(tmp.dir, 'utf8');
    mkdirSync(dir, { recursive: true });
    const inverter = new Inverter(own, 1_000, dir, 'r', 1_000, 1_000, 32);
    inverter.add(0, terms.map((_, i) => i).join(' '));
    inverter.add(3, '4 4 8');
    inverter.spill();
    const recs = records((inverter.runs[0] as RunFile).path);
    const utf8 = (t: string): string => Buffer.from(t, 'utf8').toString('utf8');
    // records in the inverter's term order (UTF-16), each term as Buffer encodes it
    const order = [...terms].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(recs.map((r) => r.term)).toEqual(order.map(utf8));
    expect(recs.map((r) => [r.df, r.lastDoc])).toEqual(
      order.map((t) => (t === 'x\ud800' || t === '東'.repeat(255) ? [2, 3] : [1, 0])),
    );
  });

  it("writes every run in the merge's term order, sorting new terms into the order kept from the runs before", () => {
    // well-formed terms (records hold UTF-8): shared prefixes of every length, units past the
    // surrogates (U+FF5A sorts after an astral character's first unit), prefixes of one another
    const term = fc.oneof(
      fc.stringMatching(/^[a-z0-9]{1,9}$/),
      fc.stringMatching(/^(inter|const|ab|kkkkkkkkkkkk)[a-zé]{0,4}$/),
      fc.string({ unit: fc.constantFrom('a', 'b', 'é', 'ｚ', '😀', '東'), minLength: 1, maxLength: 7 }),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 5 }),
    );
    let k = 0;
    fc.assert(
      fc.property(
        fc.uniqueArray(term, { minLength: 1, maxLength: 400 }),
        fc.integer({ min: 1, max: 5 }),
        (terms, runs) => {
          const dir = join(tmp.dir, `order${k++}`);
          mkdirSync(dir, { recursive: true });
          const inverter = new Inverter(numberedAnalyzer(terms), 1 << 20, dir, 'r', 1 << 20, 1 << 20, 64);
          // run r brings in the terms up to its share (the ones before stay in the vocabulary)
          // and uses every other term seen so far
          for (let r = 0; r < runs; r++) {
            const upTo = Math.ceil((terms.length * (r + 1)) / runs);
            const used = Array.from({ length: upTo }, (_, i) => i).filter((i) => i >= upTo - 10 || i % 2 === r % 2);
            inverter.add(r, used.reverse().join(' '));
            inverter.spill();
            const got = records((inverter.runs[r] as RunFile).path).map((rec) => rec.term);
            expect(got).toEqual(used.map((i) => terms[i] as string).sort(compareTerms));
          }
        },
      ),
      { numRuns: 300 },
    );
    // a vocabulary like the generated corpus's (syllables: long shared prefixes), 30,000 terms
    const syllables = ['mar', 'nor', 'jun', 'ka', 'ru', 'zel', 'lo', 'vin', 'ste', 'n'];
    const big = new Set<string>();
    for (let i = 0; big.size < 30_000; i++) {
      let t = '';
      for (let x = i * 2654435761; t.length < 12; x = Math.floor(x / 10)) t += syllables[x % 10];
      big.add(t.slice(0, 4 + (i % 9)));
    }
    const terms = [...big];
    const dir = join(tmp.dir, 'order-big');
    mkdirSync(dir, { recursive: true });
    const inverter = new Inverter(numberedAnalyzer(terms), 1 << 20, dir, 'r', 1 << 20, 1 << 20);
    inverter.add(0, terms.map((_, i) => i).join(' '));
    inverter.spill();
    expect(records((inverter.runs[0] as RunFile).path).map((r) => r.term)).toEqual([...terms].sort(compareTerms));
  });

  it('writes a term of the longest UTF-8 length a record holds and refuses a longer one, naming the analyzer', () => {
    const longest = '東'.repeat(MAX_TERM_UNITS); // 65,535 UTF-8 bytes
    const own = numberedAnalyzer([longest, 'x'.repeat(MAX_TERM_UNITS + 1), 'a']);
    const dir = join(tmp.dir, 'longest');
    mkdirSync(dir, { recursive: true });
    const inverter = new Inverter(own, 1_000, dir, 'r', 1_000, 1_000, 64);
    inverter.add(0, '0 2 0');
    inverter.spill();
    const recs = records((inverter.runs[0] as RunFile).path);
    expect(recs.map((r) => [r.term, r.df])).toEqual([
      ['a', 1],
      [longest, 1],
    ]);
    expect(() => inverter.add(1, '2 1')).toThrow(/test-numbers\/1 normalised a word to a term of 21846 UTF-16 units/);
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

  it('keeps no batch text alive through the terms it keeps', () => {
    // V8 makes a slice of 13+ characters a view of its whole string: a kept term that was one kept its text
    const inverter = new Inverter(analyzer, 1_000_000, tmp.dir, 'retain');
    inverter.addBatch(0, ['warm up the code paths'], new Uint32Array(1));
    const grew = heapGrowth(() => {
      for (let b = 1; b <= 40; b++) {
        // 40 texts of 500k characters (20 MB), each with one new long word
        const text = `longuniqueword${b.toString(36)}zz ${'filler '.repeat(71_000)}`;
        inverter.addBatch(b, [text], new Uint32Array(1));
      }
    });
    expect(grew).toBeLessThan(5e6);
  });

  it('refuses chunks out of order', () => {
    const inverter = new Inverter(analyzer, 100, tmp.dir, 'order');
    inverter.add(5, 'alpha');
    expect(() => inverter.add(5, 'beta')).toThrow(/chunk 5 after 5/);
    expect(() => inverter.addBatch(3, ['beta', 'gamma'], new Uint32Array(2))).toThrow(/chunk 3 after 5/);
  });
});

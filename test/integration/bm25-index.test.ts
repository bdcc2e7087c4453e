import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Bm25Searcher, mergeHits } from '../../src/index/bm25/bm25-searcher.js';
import { INDEX_FILES } from '../../src/index/layout.js';
import { bm25Files, openCorpus } from '../../src/search/open-corpus.js';
import { createEnglishAnalyzer } from '../../src/text/analyzer.js';
import { build, writeJsonl } from '../helpers/build.js';
import { naiveBm25 } from '../helpers/naive-bm25.js';
import { makeTempDir } from '../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

const VOCAB = [
  'river',
  'rivers',
  'bank',
  'banking',
  'money',
  'fish',
  'fishing',
  'boat',
  'the',
  'of',
  'ran',
  'running',
  'runs',
  'quick',
  'Paris',
  'paris',
  'city',
  'cities',
];
let counter = 0;

/** 400 docs over VOCAB, 'zebra' in a few: lists long and short for the range-split tests. */
const RANGE_DOCS = Array.from({ length: 400 }, (_, i) => {
  const words = Array.from({ length: 8 + (i % 9) }, (_, j) => VOCAB[(i * 5 + j * 7) % VOCAB.length] as string);
  if (i % 97 === 3) words.push('zebra');
  return words.join(' ');
});

async function buildCorpus(docs: string[], maxPostingsInMemory = 1_000_000) {
  const name = `c${counter++}`;
  const input = writeJsonl(
    tmp.dir,
    `${name}.jsonl`,
    docs.map((text, i) => ({ id: `d${i}`, text })),
  );
  await build({ name, input, format: 'jsonl', indexDir: join(tmp.dir, 'idx'), maxPostingsInMemory });
  return openCorpus(join(tmp.dir, 'idx'), name);
}

describe('BM25 index on disk', () => {
  it('ranks exactly like a naive BM25 over the same analyzer (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.constantFrom(...VOCAB), { minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.constantFrom(...VOCAB), { minLength: 1, maxLength: 5 }),
        async (docWords, queryWords) => {
          const docs = docWords.map((w) => w.join(' '));
          const corpus = await buildCorpus(docs);
          try {
            const query = queryWords.join(' ');
            const got = corpus.bm25.search(query, 1000);
            const want = naiveBm25(docs, query, 0.9, 0.4);
            expect(got.map((h) => h.num)).toEqual(want.map((h) => h.num));
            got.forEach((h, i) => expect(h.score).toBeCloseTo((want[i] as { score: number }).score, 4));
          } finally {
            corpus.close();
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it('spilling many sorted runs gives byte-identical postings and the same results', async () => {
    const docs = Array.from({ length: 300 }, (_, i) =>
      Array.from(
        { length: 20 },
        (_, j) => VOCAB[(i * 7 + j * 3) % VOCAB.length] + (j % 5 === 0 ? String(i % 13) : ''),
      ).join(' '),
    );
    const one = await buildCorpus(docs);
    const many = await buildCorpus(docs, 1000); // forces ~5 spilled runs
    try {
      expect(readFileSync(join(many.dir, INDEX_FILES.postings))).toEqual(
        readFileSync(join(one.dir, INDEX_FILES.postings)),
      );
      expect(readFileSync(join(many.dir, INDEX_FILES.norms))).toEqual(readFileSync(join(one.dir, INDEX_FILES.norms)));
      expect(many.manifest.bm25.terms).toBe(one.manifest.bm25.terms);
      for (const q of ['river bank', 'fishing boat 3', 'paris cities running']) {
        expect(many.bm25.search(q, 50)).toEqual(one.bm25.search(q, 50));
      }
    } finally {
      one.close();
      many.close();
    }
  });

  it('selects the same top k whether a query scores few docs or most of them, with and without a filter', async () => {
    // 400 docs of common words, a few with rare ones: a rare query scores a
    // handful of docs (selection from the docs it touched), a common one
    // scores nearly all (selection by one pass over the accumulator)
    const docs = Array.from({ length: 400 }, (_, i) => {
      const words = Array.from({ length: 8 + (i % 9) }, (_, j) => VOCAB[(i * 5 + j * 7) % VOCAB.length] as string);
      if (i % 97 === 3) words.push('zebra');
      if (i % 131 === 5 || i % 194 === 3) words.push('quokka', 'quokka'); // 3 and 197 have both rare words
      return words.join(' ');
    });
    const corpus = await buildCorpus(docs);
    try {
      const bits = new Uint8Array(Math.ceil(docs.length / 8));
      const nums: number[] = [];
      for (let i = 0; i < docs.length; i += 3) {
        bits[i >>> 3] = (bits[i >>> 3] as number) | (1 << (i & 7));
        nums.push(i);
      }
      const filter = { bits, nums: Uint32Array.from(nums) };
      for (const q of ['zebra quokka', 'quokka', 'river bank fishing', 'paris running boat money']) {
        const want = naiveBm25(docs, q, 0.9, 0.4);
        for (const k of [1, 3, 10]) {
          const got = corpus.bm25.search(q, k);
          expect(
            got.map((h) => h.num),
            `${q} k=${k}`,
          ).toEqual(want.slice(0, k).map((h) => h.num));
          got.forEach((h, i) => expect(h.score).toBeCloseTo((want[i] as { score: number }).score, 4));
          const allowed = want.filter((h) => h.num % 3 === 0).slice(0, k);
          expect(
            corpus.bm25.search(q, k, filter).map((h) => h.num),
            `${q} k=${k} filtered`,
          ).toEqual(allowed.map((h) => h.num));
        }
      }
    } finally {
      corpus.close();
    }
  });

  it('searches over parts of the chunk range merge into exactly the whole search (hits and scores)', async () => {
    // the BM25 pool splits a search at the middle: the thread's half and the main thread's half
    // must merge into the very list one search returns, on both selection paths and at any cut
    const corpus = await buildCorpus(RANGE_DOCS);
    try {
      for (const q of ['zebra', 'zebra river', 'river bank fishing', 'paris running boat money of the']) {
        for (const k of [1, 5, 50, 400]) {
          const whole = corpus.bm25.search(q, k);
          for (const cut of [0, 1, 97, 200, 399, 400]) {
            const parts = [
              corpus.bm25.search(q, k, undefined, { from: 0, to: cut }),
              corpus.bm25.search(q, k, undefined, { from: cut, to: 400 }),
            ];
            parts[0]?.forEach((h) => expect(h.num).toBeLessThan(cut));
            parts[1]?.forEach((h) => expect(h.num).toBeGreaterThanOrEqual(cut));
            expect(mergeHits(parts, k), `${q} k=${k} cut=${cut}`).toEqual(whole);
          }
        }
      }
      // an empty or inverted range scores nothing
      expect(corpus.bm25.search('river', 10, undefined, { from: 50, to: 50 })).toEqual([]);
      expect(corpus.bm25.search('river', 10, undefined, { from: 60, to: 50 })).toEqual([]);
    } finally {
      corpus.close();
    }
  });

  it('without a block-max file, a searcher asked for the same range again reads only its part of each list', async () => {
    // a pool thread always gets the same range: after its first search it starts each long list at
    // the range's first posting (carrying the doc before it) and stops at the range's end
    const corpus = await buildCorpus(RANGE_DOCS);
    // the exhaustive scorer: no block-max file
    const files = bm25Files(corpus.dir, corpus.manifest);
    delete files.blocksPath;
    const searcher = (): Bm25Searcher =>
      new Bm25Searcher({
        ...files,
        lookupTerm: (t) => corpus.store.lookupTerm(t),
        analyzer: createEnglishAnalyzer(),
        boundsMinBytes: 0, // every list, however short, has its bounds learnt
      });
    const queries = ['zebra', 'zebra river', 'river bank fishing', 'paris running boat money of the'];
    try {
      for (const cuts of [
        [0, 1, 400],
        [0, 97, 200, 400],
        [0, 133, 266, 399, 400],
        [0, 400, 400],
      ]) {
        const parts = cuts.slice(1).map((to, i) => ({ range: { from: cuts[i] as number, to }, bm25: searcher() }));
        for (let round = 0; round < 3; round++) {
          for (const q of queries) {
            for (const k of [1, 5, 400]) {
              const lists = parts.map((p) => p.bm25.search(q, k, undefined, p.range));
              lists.forEach((hits, i) =>
                expect(hits, `${q} k=${k} part ${i} of ${cuts.join(',')} round ${round}`).toEqual(
                  corpus.bm25.search(q, k, undefined, parts[i]?.range),
                ),
              );
              expect(mergeHits(lists, k)).toEqual(corpus.bm25.search(q, k));
            }
          }
        }
        // every non-empty part short of the whole range learnt its lists' bounds
        for (const p of parts) {
          const learns = p.range.to > p.range.from && (p.range.from > 0 || p.range.to < 400);
          expect(p.bm25.knownBounds > 0, `${p.range.from}-${p.range.to}`).toBe(learns);
          p.bm25.close();
        }
      }
    } finally {
      corpus.close();
    }
  });

  it('query and document tokenization agree: any inflection finds the document', async () => {
    const corpus = await buildCorpus([
      "The runner's connections were running late.",
      'Banks and rivers.',
      'Nothing relevant here.',
    ]);
    try {
      // every query form differs from the indexed surface form
      for (const q of ['RUNNERS', 'connected', 'run', "runner's", 'Connection']) {
        const hits = corpus.bm25.search(q, 3);
        expect(hits[0]?.num, q).toBe(0);
        // and every analyzed query term exists verbatim in the on-disk term dictionary
        for (const term of corpus.bm25.analyzeQuery(q).keys())
          expect(corpus.store.lookupTerm(term), term).toBeDefined();
      }
      expect(corpus.bm25.search('bank river', 3)[0]?.num).toBe(1);
      expect(corpus.bm25.search('the of and', 3)).toEqual([]); // stopwords only
    } finally {
      corpus.close();
    }
  });

  it('applies an allow-list before top-k', async () => {
    const corpus = await buildCorpus(['fish fish fish', 'fish', 'fish boat', 'boat']);
    try {
      const bits = new Uint8Array(1);
      bits[0] = (1 << 1) | (1 << 3);
      expect(corpus.bm25.search('fish', 1, { bits, nums: Uint32Array.from([1, 3]) }).map((h) => h.num)).toEqual([1]);
    } finally {
      corpus.close();
    }
  });
});

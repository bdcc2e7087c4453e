import fc from 'fast-check';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BlockMaxReader, BLOCK_SIZE } from '../../src/index/bm25/block-max.js';
import { Bm25Searcher } from '../../src/index/bm25/bm25-searcher.js';
import { INDEX_FILES } from '../../src/index/layout.js';
import { bm25Files, openCorpus, type OpenCorpus } from '../../src/search/open-corpus.js';
import { createEnglishAnalyzer } from '../../src/text/analyzer.js';
import { build, writeJsonl } from '../helpers/build.js';
import { makeTempDir } from '../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);
let counter = 0;

/**
 * Words drawn from a Zipf-like law over a small vocabulary, in topics (a doc
 * favours one band of the vocabulary), so lists range from a handful of
 * postings to most of the corpus, terms co-occur, and tf > 1 is common.
 */
function zipfDocs(seed: number, docs: number, vocab: number): string[] {
  let s = seed >>> 0 || 1;
  const rand = (): number => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
  const word = (i: number): string => `w${i.toString(36)}x`;
  return Array.from({ length: docs }, () => {
    const topic = Math.floor(rand() * 8);
    const len = 3 + Math.floor(rand() * rand() * 60);
    return Array.from({ length: len }, () => {
      const r = Math.floor(vocab * rand() ** 2.5);
      return word(rand() < 0.3 ? (r + topic * 17) % vocab : r);
    }).join(' ');
  });
}

async function buildCorpus(docs: string[]): Promise<OpenCorpus> {
  const name = `b${counter++}`;
  const input = writeJsonl(
    tmp.dir,
    `${name}.jsonl`,
    docs.map((text, i) => ({ id: `d${i}`, text })),
  );
  await build({ name, input, format: 'jsonl', indexDir: join(tmp.dir, 'idx') });
  return openCorpus(join(tmp.dir, 'idx'), name);
}

/** The same index scored exhaustively: the searcher without its block-max file. */
function exhaustive(c: OpenCorpus): Bm25Searcher {
  const files = bm25Files(c.dir, c.manifest);
  delete files.blocksPath;
  return new Bm25Searcher({ ...files, lookupTerm: (t) => c.store.lookupTerm(t), analyzer: createEnglishAnalyzer() });
}

describe('block-max BM25', () => {
  it('returns exactly the exhaustive scorer’s hits and scores (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2 ** 31 }),
        fc.integer({ min: 300, max: 9000 }),
        fc.integer({ min: 20, max: 400 }),
        fc.array(fc.array(fc.integer({ min: 0, max: 399 }), { minLength: 1, maxLength: 12 }), {
          minLength: 4,
          maxLength: 12,
        }),
        async (seed, n, vocab, queryWords) => {
          const docs = zipfDocs(seed, n, vocab);
          const c = await buildCorpus(docs);
          const ref = exhaustive(c);
          try {
            expect(c.bm25.pruning).toBe(true);
            expect(ref.pruning).toBe(false);
            for (const words of queryWords) {
              const q = words.map((w) => `w${(w % vocab).toString(36)}x`).join(' ');
              for (const k of [1, 3, 10, 100]) {
                expect(c.bm25.search(q, k), `${q} k=${k}`).toEqual(ref.search(q, k));
                // a range, as a pool thread searches one
                const range = { from: Math.floor(n / 3), to: n - 7 };
                expect(c.bm25.search(q, k, undefined, range)).toEqual(ref.search(q, k, undefined, range));
              }
            }
          } finally {
            ref.close();
            c.close();
          }
        },
      ),
      { numRuns: 12 },
    );
  }, 120_000);

  it('applies a filter inside the pruned search, as the exhaustive scorer does', async () => {
    const docs = zipfDocs(7, 6000, 120);
    const c = await buildCorpus(docs);
    const ref = exhaustive(c);
    try {
      for (const keep of [2, 3, 50]) {
        const bits = new Uint8Array(Math.ceil(docs.length / 8));
        const nums: number[] = [];
        for (let d = 0; d < docs.length; d++) {
          if (d % keep !== 1) continue;
          bits[d >>> 3] = (bits[d >>> 3] as number) | (1 << (d & 7));
          nums.push(d);
        }
        const filter = { bits, nums: Uint32Array.from(nums) };
        for (const q of ['w0x w1x w5x', 'w2x w3kx w1ax w7x w0x', 'w4x']) {
          const got = c.bm25.search(q, 10, filter);
          expect(got.length).toBeGreaterThan(0);
          got.forEach((h) => expect(h.num % keep).toBe(1));
          expect(got).toEqual(ref.search(q, 10, filter));
        }
      }
    } finally {
      ref.close();
      c.close();
    }
  });

  it('stores blocks for the long lists only, each block’s best posting bounding its postings', async () => {
    const docs = zipfDocs(11, 5000, 80);
    const c = await buildCorpus(docs);
    try {
      const reader = new BlockMaxReader(join(c.dir, INDEX_FILES.blocks), {
        params: { k1: c.manifest.bm25.k1, b: c.manifest.bm25.b },
        avgdl: c.manifest.bm25.total_tokens / c.manifest.bm25.doc_count,
      });
      const long = c.store.lookupTerm('w0x');
      const short = [...Array(80).keys()]
        .map((i) => c.store.lookupTerm(`w${i.toString(36)}x`))
        .find((e) => e !== undefined && e.df <= BLOCK_SIZE);
      expect(long && long.df).toBeGreaterThan(BLOCK_SIZE * 4);
      const into = {
        count: 0,
        lastDoc: new Uint32Array(1),
        endByte: new Uint32Array(1),
        bestTf: new Uint32Array(1),
        bestNorm: new Uint32Array(1),
      };
      expect(reader.read(long!.offset, into)).toBe(true);
      expect(into.count).toBe(Math.ceil(long!.df / BLOCK_SIZE));
      expect(into.endByte[into.count - 1]).toBe(long!.nbytes);
      for (let j = 1; j < into.count; j++) expect(into.lastDoc[j]).toBeGreaterThan(into.lastDoc[j - 1] as number);
      expect(into.bestTf[0]).toBeGreaterThanOrEqual(1);
      if (short) expect(reader.read(short.offset, into)).toBe(false);
      reader.close();
    } finally {
      c.close();
    }
  });

  it('an index built before block-max files opens and scores exhaustively, with the same hits', async () => {
    const docs = zipfDocs(3, 3000, 60);
    const c = await buildCorpus(docs);
    const queries = ['w0x w1x', 'w2x w9x w1fx', 'w5x w5x w3x'];
    const want = queries.map((q) => c.bm25.search(q, 10));
    c.close();
    // what an older build left: no block-max file, and none in the manifest
    rmSync(join(c.dir, INDEX_FILES.blocks));
    const manifestPath = join(c.dir, INDEX_FILES.manifest);
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    delete manifest.files[INDEX_FILES.blocks];
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const old = openCorpus(join(tmp.dir, 'idx'), c.name);
    try {
      expect(old.bm25.pruning).toBe(false);
      expect(queries.map((q) => old.bm25.search(q, 10))).toEqual(want);
    } finally {
      old.close();
    }
  });

  it('refuses a block-max file made for other BM25 parameters', async () => {
    const c = await buildCorpus(zipfDocs(5, 500, 30));
    try {
      expect(
        () =>
          new BlockMaxReader(join(c.dir, INDEX_FILES.blocks), {
            params: { k1: 1.2, b: 0.75 },
            avgdl: c.manifest.bm25.total_tokens / c.manifest.bm25.doc_count,
          }),
      ).toThrow(/made for k1 0.9, b 0.4.*rebuild the index/);
    } finally {
      c.close();
    }
  });
});

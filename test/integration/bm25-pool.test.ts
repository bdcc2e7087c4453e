import fc from 'fast-check';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Bm25Pool, splitRange } from '../../src/index/bm25/bm25-pool.js';
import { INDEX_FILES } from '../../src/index/layout.js';
import { bm25Files, openCorpus, type OpenCorpus } from '../../src/search/open-corpus.js';
import { build, writeJsonl } from '../helpers/build.js';
import { makeTempDir } from '../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

const WORDS = ['river', 'bank', 'money', 'fish', 'boat', 'paris', 'city', 'king', 'war', 'film', 'song', 'bridge'];
const DOCS = Array.from({ length: 2000 }, (_, i) =>
  Array.from({ length: 5 + (i % 23) }, (_, j) => WORDS[(i * 7 + j * j + (i >> 3)) % WORDS.length]).join(' '),
);
const QUERIES = Array.from(
  { length: 60 },
  (_, i) => `${WORDS[i % 12]} ${WORDS[(i * 5) % 12]} of the ${WORDS[(i * 3) % 12]}`,
);

async function open(): Promise<OpenCorpus> {
  const input = writeJsonl(
    tmp.dir,
    'docs.jsonl',
    DOCS.map((text, i) => ({ id: `d${i}`, text })),
  );
  await build({ name: 'p', input, format: 'jsonl', indexDir: join(tmp.dir, 'idx') });
  return openCorpus(join(tmp.dir, 'idx'), 'p');
}

function files(c: OpenCorpus, storePath = join(c.dir, INDEX_FILES.store)) {
  return { ...bm25Files(c.dir, c.manifest), storePath };
}

describe('splitRange', () => {
  it('cuts [0, n) into ranges that cover it in order and differ in size by at most one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30_000_000 }), fc.integer({ min: 1, max: 65 }), (n, parts) => {
        const cuts = splitRange(n, parts);
        expect(cuts).toHaveLength(parts + 1);
        expect(cuts[0]).toBe(0);
        expect(cuts[parts]).toBe(n);
        const sizes = cuts.slice(1).map((c, i) => c - (cuts[i] as number));
        expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      }),
    );
  });
});

describe('BM25 search threads', () => {
  it('answer exactly what the inline searcher answers, many searches at once cut four ways', async () => {
    const c = await open();
    const warnings: string[] = [];
    // three threads and the main thread; every list's bounds are learnt, so later rounds start
    // each list at the thread's range
    const pool = new Bm25Pool({ ...files(c), boundsMinBytes: 0 }, 3, c.bm25, (m) => warnings.push(m));
    try {
      for (const k of [1, 10, 100, 10]) {
        const got = await Promise.all(QUERIES.map((q) => pool.search(q, k)));
        got.forEach((hits, i) => expect(hits).toEqual(c.bm25.search(QUERIES[i] as string, k)));
        expect(got[0]).toHaveLength(k);
      }
      expect(pool.liveThreads).toBe(3);
      expect(warnings).toEqual([]);
    } finally {
      await pool.close();
      c.close();
    }
  });

  it('a thread that cannot start is dropped with a warning, and its searches run inline', async () => {
    const c = await open();
    const warnings: string[] = [];
    const pool = new Bm25Pool(files(c, join(tmp.dir, 'missing.sqlite')), 1, c.bm25, (m) => warnings.push(m));
    try {
      const got = await Promise.all(QUERIES.slice(0, 10).map((q) => pool.search(q, 10)));
      got.forEach((hits, i) => expect(hits).toEqual(c.bm25.search(QUERIES[i] as string, 10)));
      await expect.poll(() => pool.liveThreads).toBe(0);
      expect(warnings.join('\n')).toMatch(/BM25 search thread failed: .*main thread/);
      expect(await pool.search(QUERIES[0] as string, 5)).toEqual(c.bm25.search(QUERIES[0] as string, 5));
    } finally {
      await pool.close();
      c.close();
    }
  });
});

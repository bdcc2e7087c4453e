import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCorpus, type OpenCorpus } from '../../src/search/open-corpus.js';
import { Retriever } from '../../src/search/retriever.js';
import { build, writeJsonl } from '../helpers/build.js';
import { makeLongPassages, makeQueries } from '../helpers/long-passages.js';
import { makeTempDir } from '../helpers/paths.js';

// A 256-query BM25 batch used to run as one synchronous block: with 8 such clients /health waited
// 930 ms at the median and 4 s at worst. The retriever now scores a batch in turns of a few ms;
// this counts the event-loop turns that other work (health checks, new requests) gets during one.
const tmp = makeTempDir();
const corpora: OpenCorpus[] = [];

beforeAll(async () => {
  const input = writeJsonl(tmp.dir, 'p.jsonl', makeLongPassages(6000, 300));
  await build({ name: 'p', input, format: 'wiki18', indexDir: join(tmp.dir, 'idx') });
}, 120_000);
afterAll(async () => {
  for (const c of corpora) c.close();
  tmp.cleanup();
});

const options = {
  topK: 10,
  maxTopK: 100,
  maxQueryChars: 8192,
  candidates: 100,
  rrfK: 60,
  weights: { bm25: 1, dense: 1 },
};

describe('a batch leaves the event loop free between short turns', () => {
  for (const threads of [0, 1]) {
    it(`with ${threads} BM25 worker thread(s)`, async () => {
      const corpus = openCorpus(join(tmp.dir, 'idx'), 'p', { bm25Threads: threads });
      corpora.push(corpus);
      const retriever = new Retriever([corpus], new Map(), options);
      const queries = makeQueries(256, 8);
      let ticks = 0;
      let on = true;
      const tick = (): void => {
        ticks++;
        if (on) setImmediate(tick);
      };
      setImmediate(tick);
      const t0 = performance.now();
      const results = await retriever.searchMany(queries, { topK: 10, mode: 'bm25' });
      const ms = performance.now() - t0;
      on = false;
      expect(results).toHaveLength(256);
      expect(results.every((r) => r.results.length === 10)).toBe(true);
      // one turn at least every 25 ms of batch work (turns are ≈ 5 ms); a single block gives 1–2
      expect(ms).toBeGreaterThan(30);
      expect(ticks).toBeGreaterThanOrEqual(Math.floor(ms / 25));
    });
  }
});

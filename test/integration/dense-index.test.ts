import { localOnly } from '../../src/search/served-corpus.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { TEST_ANN } from '../helpers/ann.js';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDensePhase } from '../../src/build/dense-phase.js';
import type { Encoder } from '../../src/encoder/encoder.js';
import { openDenseArm } from '../../src/index/dense/dense-arm.js';
import { INDEX_FILES } from '../../src/index/layout.js';
import { openCorpus, type OpenCorpus } from '../../src/search/open-corpus.js';
import { Retriever } from '../../src/search/retriever.js';
import { build, writeJsonl } from '../helpers/build.js';
import { failingAfter, openTinyEncoder } from '../helpers/encoder.js';
import { HAS_SHARED, makeTempDir } from '../helpers/paths.js';

const tmp = makeTempDir();
const WORDS = [
  'river',
  'mountain',
  'city',
  'music',
  'film',
  'war',
  'king',
  'science',
  'ocean',
  'bridge',
  'novel',
  'engine',
];
const PASSAGES = Array.from({ length: 300 }, (_, i) => ({
  id: `p${i}`,
  contents: `"Title ${i}"\n${Array.from({ length: 12 + (i % 17) }, (_, j) => WORDS[(i * 5 + j * 7) % WORDS.length]).join(' ')} number ${i}.`,
}));
const QUERIES = ['river city bridge', 'a film about war', 'king of the ocean', 'science engine', 'number 42'];

let encoder: Encoder;
let input: string;
beforeAll(async () => {
  if (!HAS_SHARED) return;
  encoder = await openTinyEncoder();
  input = writeJsonl(tmp.dir, 'corpus.jsonl', PASSAGES);
});
afterAll(async () => {
  await encoder?.close();
  tmp.cleanup();
});

async function buildDense(
  name: string,
  over: {
    exactBelow?: number;
    windowSize?: number;
    enc?: Encoder;
    resume?: boolean | 'auto';
    ann?: Partial<typeof TEST_ANN>;
    onAnnBatch?: (rows: number) => void;
    signal?: AbortSignal;
  } = {},
) {
  const dense = createDensePhase({
    encoder: over.enc ?? encoder,
    source: { kind: 'local', path: '/models/tiny' },
    vectorsDtype: 'f32',
    ann: { ...TEST_ANN, ...over.ann },
    exactBelow: over.exactBelow ?? 20_000,
    annThreads: 1,
    windowSize: over.windowSize ?? 4096,
    // graph checkpoints after every batch of 64 rows
    annBatch: 64,
    annCheckpointMs: 0,
    ...(over.onAnnBatch ? { onAnnBatch: over.onAnnBatch } : {}),
  });
  return build({
    name,
    input,
    format: 'wiki18',
    indexDir: join(tmp.dir, 'idx'),
    dense,
    resume: over.resume ?? false,
    ...(over.signal ? { signal: over.signal } : {}),
  });
}

function open(name: string): OpenCorpus {
  return openCorpus(join(tmp.dir, 'idx'), name, (dir, m, hint) =>
    openDenseArm(dir, m.dense as NonNullable<typeof m.dense>, hint, { mmap: true, rescoreFactor: 4 }),
  );
}

/** A graph-batch callback that fails once `rows` rows are in the graph, as a crash there would. */
function crashAt(rows: number): (n: number) => void {
  return (n) => {
    if (n >= rows) throw new Error('simulated crash in the graph');
  };
}

/** Brute force over passage vectors computed independently of the index. */
async function bruteForce(query: string, k: number): Promise<Array<{ num: number; score: number }>> {
  const [q] = await encoder.embedQueries([query]);
  const ps = await encoder.embedPassages(PASSAGES.map((p) => p.contents));
  const scored = ps.map((p, num) => ({ num, score: p.reduce((s, x, d) => s + x * (q as Float32Array)[d]!, 0) }));
  return scored.sort((a, b) => b.score - a.score || a.num - b.num).slice(0, k);
}

describe.skipIf(!HAS_SHARED)('dense index (tiny-e5, real ONNX, real USearch)', () => {
  it('small corpora are searched exactly: same top-k and true cosine scores as brute force', async () => {
    const s = await buildDense('exact');
    expect(s.manifest.dense?.ann).toBeNull();
    const c = open('exact');
    try {
      for (const text of QUERIES) {
        const [q] = await encoder.embedQueries([text]);
        const got = c.dense!.search(q as Float32Array, 10);
        const want = await bruteForce(text, 10);
        expect(got.map((h) => h.num)).toEqual(want.map((h) => h.num));
        got.forEach((h, i) => expect(Math.abs(h.score - want[i]!.score)).toBeLessThan(1e-6));
      }
    } finally {
      c.close();
    }
  });

  it('the HNSW path re-scores candidates exactly and finds the true neighbours', async () => {
    const s = await buildDense('ann', { exactBelow: 0 });
    expect(s.manifest.dense?.ann).toMatchObject({ library: 'usearch', quantization: 'i8', connectivity: 16 });
    expect(existsSync(join(tmp.dir, 'idx', 'ann', INDEX_FILES.ann))).toBe(true);
    const c = open('ann');
    try {
      let found = 0;
      for (const text of QUERIES) {
        const [q] = await encoder.embedQueries([text]);
        const got = c.dense!.search(q as Float32Array, 10);
        const want = await bruteForce(text, 10);
        const truth = new Map(want.map((h) => [h.num, h.score]));
        for (const h of got) {
          if (truth.has(h.num)) {
            found++;
            expect(Math.abs(h.score - truth.get(h.num)!)).toBeLessThan(1e-6);
          }
        }
      }
      expect(found / (QUERIES.length * 10)).toBeGreaterThanOrEqual(0.9);
    } finally {
      c.close();
    }
  });

  it('a batch of queries (graph walked on two threads) gets what each query gets alone', async () => {
    await buildDense('annbatch', { exactBelow: 0 });
    const c = openCorpus(join(tmp.dir, 'idx'), 'annbatch', (dir, m, hint) =>
      openDenseArm(dir, m.dense as NonNullable<typeof m.dense>, hint, {
        mmap: true,
        rescoreFactor: 4,
        searchThreads: 2,
      }),
    );
    try {
      const texts = [...QUERIES, ...QUERIES.map((q) => `${q} again`), 'number 7'];
      const vecs = await encoder.embedQueries(texts);
      for (const k of [1, 10, 40]) {
        const batch = c.dense!.searchMany(vecs, k);
        expect(batch).toHaveLength(texts.length);
        vecs.forEach((v, i) => expect(batch[i]).toEqual(c.dense!.search(v, k)));
        expect(batch[0]).toHaveLength(k);
        // not every query got the same list
        expect(new Set(batch.map((hits) => hits.map((h) => h.num).join())).size).toBeGreaterThan(1);
      }
    } finally {
      c.close();
    }
  });

  it('hybrid with the BM25 arm on worker threads returns what the inline arm returns', async () => {
    await buildDense('annpool', { exactBelow: 0 });
    const retriever = (threads: number) =>
      new Retriever(
        [
          openCorpus(join(tmp.dir, 'idx'), 'annpool', {
            openDense: (dir, m, hint) => openDenseArm(dir, m.dense!, hint, { mmap: true, rescoreFactor: 4 }),
            bm25Threads: threads,
          }),
        ],
        new Map([['annpool', encoder]]),
        {
          topK: 10,
          maxTopK: 100,
          maxQueryChars: 1000,
          candidates: 50,
          rrfK: 60,
          weights: { bm25: 1, dense: 1 },
          cacheSize: 0,
        },
      );
    const inline = retriever(0);
    const threaded = retriever(2);
    try {
      expect(localOnly(threaded.defaultCorpus, 'test').bm25Pool?.liveThreads).toBe(2);
      expect(localOnly(inline.defaultCorpus, 'test').bm25Pool).toBeNull();
      const texts = [...QUERIES, 'number 12 river', 'war film king'];
      const one = await Promise.all(texts.map((q) => threaded.search({ query: q, mode: 'hybrid', topK: 20 })));
      const many = await threaded.searchMany(texts, { mode: 'hybrid', topK: 20 });
      for (const [i, q] of texts.entries()) {
        const want = await inline.search({ query: q, mode: 'hybrid', topK: 20 });
        expect(want.results.some((h) => h.bm25_rank !== undefined)).toBe(true);
        expect(one[i]).toEqual(want);
        expect(many[i]).toEqual(want);
      }
    } finally {
      // the corpora only: Retriever.close would also close the shared encoder
      for (const c of [...inline.corpora, ...threaded.corpora]) c.close();
    }
  });

  it('a build that leaves M and efSearch to the defaults records the size-based shape', async () => {
    const dense = createDensePhase({
      encoder,
      source: { kind: 'local', path: '/models/tiny' },
      vectorsDtype: 'f32',
      ann: { expansionAdd: 64, quantization: 'i8' },
      exactBelow: 0,
      annThreads: 1,
    });
    const s = await build({ name: 'annshape', input, format: 'wiki18', indexDir: join(tmp.dir, 'idx'), dense });
    expect(s.manifest.dense?.ann).toMatchObject({ connectivity: 24, expansion_search: 128, expansion_add: 64 });
    const c = open('annshape');
    try {
      const [q] = await encoder.embedQueries(['river city bridge']);
      expect(c.dense!.search(q as Float32Array, 10)).toHaveLength(10);
    } finally {
      c.close();
    }
  });

  it('filters apply inside the dense arm, before top-k', async () => {
    const c = open('exact');
    try {
      const bits = new Uint8Array(Math.ceil(PASSAGES.length / 8));
      for (const num of [3, 77, 150]) bits[num >> 3]! |= 1 << (num & 7);
      const allow = { bits, nums: Uint32Array.from([3, 77, 150]) };
      const [q] = await encoder.embedQueries(['river']);
      expect(
        c
          .dense!.search(q as Float32Array, 10, allow)
          .map((h) => h.num)
          .sort((a, b) => a - b),
      ).toEqual([3, 77, 150]);
    } finally {
      c.close();
    }
  });

  it('an interrupted embedding pass resumes to byte-identical vectors', async () => {
    await buildDense('whole', { windowSize: 64 });
    const whole = readFileSync(join(tmp.dir, 'idx', 'whole', INDEX_FILES.vectors));
    await expect(buildDense('resumed', { windowSize: 64, enc: failingAfter(encoder, 2) })).rejects.toThrow(
      /simulated crash/,
    );
    const partial = join(tmp.dir, 'idx', '.resumed.partial', INDEX_FILES.vectors);
    expect(readFileSync(partial).length).toBe(2 * 64 * encoder.dim * 4);
    await buildDense('resumed', { windowSize: 64, resume: true });
    expect(readFileSync(join(tmp.dir, 'idx', 'resumed', INDEX_FILES.vectors))).toEqual(whole);
  });

  it('a stop in the middle of a window keeps every finished batch, and a plain re-run goes on to the same bytes (issue 57)', async () => {
    const counted = (count: () => void): Encoder => ({
      ...encoder,
      tokenCounter: encoder.tokenCounter,
      embedPassages: (t, signal, onProgress, b) =>
        encoder.embedPassages(t, signal, onProgress, {
          ...(b?.skip ? { skip: b.skip } : {}),
          onBatch: (i, rows, vecs) => {
            b?.onBatch(i, rows, vecs);
            count();
          },
        }),
    });
    let total = 0;
    await buildDense('whole-one-window', { enc: counted(() => total++) });
    const whole = readFileSync(join(tmp.dir, 'idx', 'whole-one-window', INDEX_FILES.vectors));
    // 300 passages, one window of 4,096: before, a stop anywhere in it lost them all
    const stop = new AbortController();
    let batches = 0;
    const stopping = counted(() => {
      if (++batches === 5) stop.abort(new Error('stopped by the test'));
    });
    await expect(buildDense('half', { enc: stopping, signal: stop.signal })).rejects.toThrow('stopped by the test');
    const logged = readFileSync(join(tmp.dir, 'idx', '.half.partial', 'vectors.done'));
    expect(logged.length / 12).toBeGreaterThanOrEqual(5);
    let resumedBatches = 0;
    await buildDense('half', { enc: counted(() => resumedBatches++), resume: 'auto' });
    expect(readFileSync(join(tmp.dir, 'idx', 'half', INDEX_FILES.vectors))).toEqual(whole);
    // the batches the stop kept were not run again
    expect(resumedBatches).toBe(total - logged.length / 12);
  });

  it('an interrupted HNSW graph resumes from its last checkpoint, not from the first row', async () => {
    await expect(buildDense('graph', { exactBelow: 0, onAnnBatch: crashAt(192) })).rejects.toThrow(/simulated crash/);
    const partial = join(tmp.dir, 'idx', '.graph.partial');
    // the checkpoint after 128 rows survives; the batch that failed never reached one
    expect(existsSync(join(partial, `${INDEX_FILES.ann}.checkpoint`))).toBe(true);
    expect(existsSync(join(partial, INDEX_FILES.ann))).toBe(false);

    const seen: number[] = [];
    await buildDense('graph', { exactBelow: 0, resume: true, onAnnBatch: (n) => seen.push(n) });
    // the checkpoint held rows 0–127, so the first batch ends at 192 (64 if the graph started over)
    expect(seen[0]).toBe(192);
    expect(seen.at(-1)).toBe(PASSAGES.length);
    const live = join(tmp.dir, 'idx', 'graph');
    expect(readdirSync(live).filter((f) => f.includes('checkpoint'))).toEqual([]);
    const c = open('graph');
    try {
      let found = 0;
      for (const text of QUERIES) {
        const [q] = await encoder.embedQueries([text]);
        const got = new Set(c.dense!.search(q as Float32Array, 10).map((h) => h.num));
        for (const h of await bruteForce(text, 10)) if (got.has(h.num)) found++;
      }
      expect(found / (QUERIES.length * 10)).toBeGreaterThanOrEqual(0.9);
    } finally {
      c.close();
    }
  });

  it('a checkpoint made with other graph settings is dropped and the graph starts over', async () => {
    await expect(buildDense('regraph', { exactBelow: 0, onAnnBatch: crashAt(192) })).rejects.toThrow(/simulated crash/);
    const seen: number[] = [];
    const s = await buildDense('regraph', {
      exactBelow: 0,
      resume: true,
      ann: { connectivity: 8 },
      onAnnBatch: (n) => seen.push(n),
    });
    expect(seen[0]).toBe(64);
    expect(s.manifest.dense?.ann).toMatchObject({ library: 'usearch', connectivity: 8 });
  });

  it('a resumed build that no longer makes a graph leaves no checkpoint in the index', async () => {
    await expect(buildDense('nograph', { exactBelow: 0, onAnnBatch: crashAt(192) })).rejects.toThrow(/simulated crash/);
    expect(readdirSync(join(tmp.dir, 'idx', '.nograph.partial')).some((f) => f.includes('checkpoint'))).toBe(true);
    const s = await buildDense('nograph', { exactBelow: 20_000, resume: true });
    expect(s.manifest.dense?.ann).toBeNull();
    expect(readdirSync(join(tmp.dir, 'idx', 'nograph')).filter((f) => f.includes('checkpoint'))).toEqual([]);
  });
});

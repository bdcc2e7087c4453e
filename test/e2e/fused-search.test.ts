import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuseHitLists } from '../../src/search/fuse.js';
import { tinyBuildArgs, TINY_MODEL } from '../helpers/encoder.js';
import { connectStdio, runBin, textOf } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir, sharedPath } from '../helpers/paths.js';

// Issue 57, item 6: `search` and `batch_search` take `corpus: "*"` (or a list) and `query` as a
// list of phrasings of one need; the lists are fused by RRF and each hit names its corpus.
const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'indexes');

beforeAll(() => {
  if (!HAS_SHARED) return;
  const wiki = runBin(BIN.build, tinyBuildArgs('wiki2', sharedPath('data/2wiki-200/corpus.jsonl'), indexDir, 'wiki18'));
  expect(wiki.status, wiki.stderr).toBe(0);
  const notes = join(tmp.dir, 'notes');
  mkdirSync(notes, { recursive: true });
  writeFileSync(join(notes, 'tides.md'), '# Tides\n\nThe quokkaflorp tide rises twice a day over the mudflats.\n');
  writeFileSync(join(notes, 'moons.md'), '# Moons\n\nMaheen Khan designs costumes, says this private note.\n');
  const built = runBin(BIN.build, [
    '--name',
    'notes',
    '--input',
    notes,
    '--index-dir',
    indexDir,
    '--model-path',
    TINY_MODEL,
  ]);
  expect(built.status, built.stderr).toBe(0);
}, 120_000);
afterAll(() => tmp.cleanup());

interface Hit {
  id: string;
  rank: number;
  corpus?: string;
}
interface Result {
  isError?: boolean;
  content: Array<{ text: string }>;
  structuredContent: { corpus: string; results: Hit[] };
}

describe('fuseHitLists', () => {
  it('adds 1/(k+rank) over the lists that hold a hit, keyed by corpus and id, ties by corpus then id', () => {
    const fused = fuseHitLists(
      [
        { corpus: 'b', hits: [{ id: 'x' }, { id: 'y' }] },
        { corpus: 'a', hits: [{ id: 'y' }, { id: 'x' }] },
        { corpus: 'b', hits: [{ id: 'y' }] },
      ],
      60,
      10,
    );
    expect(fused.map((f) => `${f.corpus}/${f.hit.id}`)).toEqual(['b/y', 'a/y', 'b/x', 'a/x']);
    expect(fused[0]?.score).toBeCloseTo(1 / 62 + 1 / 61, 12);
    // a tie (a/y and b/x both 1/61) goes to the smaller corpus name
    expect(fused[1]?.score).toBeCloseTo(fused[2]?.score as number, 12);
    expect(fuseHitLists([{ corpus: 'a', hits: [{ id: 'p' }, { id: 'q' }] }], 60, 1)).toHaveLength(1);
  });
});

describe.skipIf(!HAS_SHARED)('search across corpora and phrasings', () => {
  it('corpus "*" searches every served corpus; each hit names its corpus; fetch takes it', async () => {
    const s = await connectStdio(['--corpus', 'wiki2', '--corpus', 'notes', '--index-dir', indexDir]);
    try {
      const r = (await s.client.callTool({
        name: 'search',
        arguments: { query: 'Maheen Khan costumes', corpus: '*', top_k: 6, mode: 'bm25' },
      })) as unknown as Result;
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent.corpus).toBe('*');
      const corpora = new Set(r.structuredContent.results.map((h) => h.corpus));
      expect(corpora).toEqual(new Set(['wiki2', 'notes']));
      expect(r.structuredContent.results.map((h) => h.rank)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(r.content[0]?.text).toMatch(/^Doc 1 \[id \S+ in (wiki2|notes)\]/);
      const note = r.structuredContent.results.find((h) => h.corpus === 'notes') as Hit;
      const fetched = await s.client.callTool({ name: 'fetch', arguments: { id: note.id, corpus: 'notes' } });
      expect(textOf(fetched)).toMatch(/private note/);

      // a list of corpora; the default corpus alone does not hold the quokkaflorp
      const listed = (await s.client.callTool({
        name: 'search',
        arguments: { query: 'quokkaflorp tide', corpus: ['notes', 'wiki2'], mode: 'bm25' },
      })) as unknown as Result;
      expect(listed.structuredContent.results[0]).toMatchObject({ id: 'tides.md#0', corpus: 'notes' });
      const plain = (await s.client.callTool({
        name: 'search',
        arguments: { query: 'quokkaflorp tide', mode: 'bm25' },
      })) as unknown as Result;
      expect(plain.structuredContent.results.some((h) => h.id.startsWith('tides.md'))).toBe(false);

      // batch_search over every corpus: one fused list a query
      const batch = (await s.client.callTool({
        name: 'batch_search',
        arguments: { queries: ['quokkaflorp', 'Maheen Khan'], corpus: '*', top_k: 3, mode: 'bm25' },
      })) as unknown as { structuredContent: { results: Hit[][] } };
      expect(batch.structuredContent.results[0]?.[0]).toMatchObject({ corpus: 'notes' });
      expect(batch.structuredContent.results[1]?.length).toBe(3);
    } finally {
      await s.close();
    }
  }, 60_000);

  it('query as a list of phrasings: each searched, fused; at most 8; not with a query vector', async () => {
    const s = await connectStdio(['--corpus', 'wiki2', '--index-dir', indexDir]);
    try {
      const one = (await s.client.callTool({
        name: 'search',
        arguments: { query: 'Maheen Khan', mode: 'bm25', top_k: 5 },
      })) as unknown as Result;
      const two = (await s.client.callTool({
        name: 'search',
        arguments: { query: ['Maheen Khan', 'Pakistani fashion designer embroidery'], mode: 'bm25', top_k: 5 },
      })) as unknown as Result;
      expect(two.isError).toBeFalsy();
      // the passage both phrasings rank first stays first; the second phrasing brings its own hits
      expect(two.structuredContent.results[0]?.id).toBe(one.structuredContent.results[0]?.id);
      expect(two.structuredContent.results.map((h) => h.id)).not.toEqual(
        one.structuredContent.results.map((h) => h.id),
      );

      const nine = await s.client.callTool({
        name: 'search',
        arguments: { query: Array.from({ length: 9 }, (_, i) => `q${i}`) },
      });
      expect(nine.isError).toBe(true);
      const withVector = await s.client.callTool({
        name: 'search',
        arguments: { query: ['a', 'b'], query_vector: Array.from({ length: 32 }, () => 0.1) },
      });
      expect(withVector.isError).toBe(true);
      expect(textOf(withVector)).toMatch(/query_vector goes with one query on one corpus/);
    } finally {
      await s.close();
    }
  }, 60_000);
});

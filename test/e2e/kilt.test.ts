import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fromKilt, KILT_PASSAGE_WORDS } from '../../src/ingest/readers.js';
import { TINY_MODEL } from '../helpers/encoder.js';
import { connectStdio, runBin } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir } from '../helpers/paths.js';

// Issue 56, item 7: the `kilt` preset reads KILT's knowledge source (one page a line,
// {wikipedia_id, wikipedia_title, text: [paragraphs]}) and cuts each page into 100-word passages.
const tmp = makeTempDir();
afterAll(() => tmp.cleanup());

const words = (n: number, stem: string): string => Array.from({ length: n }, (_, i) => `${stem}${i}`).join(' ');
const PAGES = [
  {
    wikipedia_id: '39027',
    wikipedia_title: 'Albatross',
    text: [
      'Albatross\n',
      `Albatrosses are large seabirds that glide over the Southern Ocean. ${words(90, 'wing')}\n`,
      'Section::::Breeding.\n',
      `BULLET::::- They nest on remote islands. ${words(60, 'egg')}\n`,
    ],
    anchors: [],
    categories: 'Birds',
  },
  {
    wikipedia_id: 736,
    wikipedia_title: 'Glacier',
    text: ['Glacier\n', 'A glacier is a persistent body of dense ice that moves under its own weight.\n'],
  },
];

describe('KILT passages (fromKilt)', () => {
  it('cuts a page into 100-word passages of its body: title paragraph dropped, sections dropped, bullets stripped', () => {
    const doc = fromKilt(PAGES[0] as Record<string, unknown>, 'sample line 1');
    expect(doc.id).toBe('39027');
    expect(doc.metadata).toEqual({ wikipedia_id: '39027' });
    const passages = doc.passages ?? [];
    // 10 + 90 words, then 5 + 60: 165 words in two passages
    expect(passages.map((p) => p.contents.slice(p.bodyStart).split(' ').length)).toEqual([KILT_PASSAGE_WORDS, 65]);
    expect(passages[0]?.contents.startsWith('"Albatross"\nAlbatrosses are large seabirds')).toBe(true);
    expect(passages[1]?.contents).toMatch(/^"Albatross"\nThey nest on remote islands\. egg0/);
    expect(passages.map((p) => p.contents).join(' ')).not.toMatch(/Section::::|BULLET::::/);
    expect(fromKilt(PAGES[1] as Record<string, unknown>, 'x').id).toBe('736');
    expect(() => fromKilt({ wikipedia_title: 'x', text: [] }, 'line 9')).toThrow(/line 9: missing "wikipedia_id"/);
    expect(() => fromKilt({ wikipedia_id: '1', text: 'flat' }, 'line 9')).toThrow(/"text" must be a list/);
  });
});

describe.skipIf(!HAS_SHARED)('the kilt preset', () => {
  it('builds a sample in KILT’s schema and serves its passages by id and by page', async () => {
    const sample = join(tmp.dir, 'kilt_knowledgesource.json');
    writeFileSync(sample, PAGES.map((p) => JSON.stringify(p)).join('\n') + '\n');
    const indexDir = join(tmp.dir, 'idx');
    const b = runBin(BIN.build, [
      '--corpus',
      'kilt',
      '--input',
      sample,
      '--index-dir',
      indexDir,
      '--model-path',
      TINY_MODEL,
    ]);
    expect(b.status, b.stderr).toBe(0);
    expect(b.stderr).toMatch(/built kilt: 2 documents, 3 chunks/);

    const s = await connectStdio(['--corpus', 'kilt', '--index-dir', indexDir]);
    try {
      const r = (await s.client.callTool({
        name: 'search',
        arguments: { query: 'remote islands nest', mode: 'bm25' },
      })) as unknown as { structuredContent: { results: Array<{ id: string; doc_id: string; title: string }> } };
      expect(r.structuredContent.results[0]).toMatchObject({ id: '39027#1', doc_id: '39027', title: 'Albatross' });
      const page = (await s.client.callTool({ name: 'fetch', arguments: { doc_id: '39027' } })) as unknown as {
        structuredContent: { chunks: Array<{ id: string }> };
      };
      expect(page.structuredContent.chunks.map((c) => c.id)).toEqual(['39027#0', '39027#1']);
    } finally {
      await s.close();
    }
  }, 120_000);

  it('says where to download the knowledge source when no --input is given', () => {
    const r = runBin(BIN.build, ['--corpus', 'kilt', '--index-dir', join(tmp.dir, 'idx2'), '--offline']);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(
      /kilt_knowledgesource\.json \(34\.8 GiB\) from http:\/\/dl\.fbaipublicfiles\.com\/KILT\/.*--input PATH/,
    );
  });
});

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyBuildArgs } from '../helpers/encoder.js';
import { connectStdio, runBin, textOf, type ToolText } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir } from '../helpers/paths.js';
import { writeFileSync } from 'node:fs';

const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'indexes');
const ARTICLES = [
  {
    title: 'Chip war heats up',
    source: 'TechCrunch',
    category: 'technology',
    published_at: '2023-10-01T09:00:00+00:00',
    body: 'The chip war between rivals heats up.',
  },
  {
    title: 'Chip sales fall',
    source: 'The Verge',
    category: 'technology',
    published_at: '2023-10-15T12:00:00+00:00',
    body: 'Chip sales fall across the market.',
  },
  {
    title: 'Chip tariffs',
    source: 'Fortune',
    category: 'business',
    published_at: '2023-11-02T08:30:00+00:00',
    body: 'New chip tariffs hit business.',
  },
  {
    title: 'Chip startups',
    source: 'TechCrunch',
    category: 'technology',
    published_at: '2023-11-20T18:00:00+00:00',
    body: 'Chip startups raise money.',
  },
].map((a) => ({ author: 'A', url: `https://example.com/${a.title.replace(/ /g, '-')}`, ...a }));

describe.skipIf(!HAS_SHARED)('metadata filters (MultiHop-RAG style), inside both arms', () => {
  let s: Awaited<ReturnType<typeof connectStdio>>;
  beforeAll(async () => {
    const input = join(tmp.dir, 'corpus.json');
    writeFileSync(input, JSON.stringify(ARTICLES));
    const r = runBin(BIN.build, tinyBuildArgs('news', input, indexDir, 'multihop'));
    expect(r.status, r.stderr).toBe(0);
    s = await connectStdio(['--corpus', 'news', '--index-dir', indexDir]);
  });
  afterAll(async () => {
    await s?.close();
    tmp.cleanup();
  });

  it('each hit shows the source, category and date it can be filtered on (issue 48, item 5)', async () => {
    const r = (await s.client.callTool({
      name: 'search',
      arguments: { query: 'chip tariffs', top_k: 4, mode: 'bm25' },
    })) as ToolText;
    const first = r.content?.[0]?.text ?? '';
    // before: "Doc 1 [id …] (Title: Chip tariffs) …", the publisher and month the question names unseen
    expect(first).toMatch(
      /^Doc 1 \[id [^\]]+\] \(Title: Chip tariffs; Source: Fortune; Category: business; 2023-11-02\) /,
    );
    const hit = (r.structuredContent as { results: Array<{ metadata?: Record<string, unknown> }> }).results[0];
    expect(hit?.metadata).toMatchObject({
      source: 'Fortune',
      category: 'business',
      published_at: '2023-11-02T08:30:00+00:00',
    });
    const f = (await s.client.callTool({
      name: 'fetch',
      arguments: { id: (r.structuredContent as { results: Array<{ id: string }> }).results[0]?.id },
    })) as ToolText;
    expect(f.content?.[0]?.text).toMatch(/\(Title: Chip tariffs; Source: Fortune; Category: business; 2023-11-02\)/);
  });

  const titles = async (filter: unknown, mode = 'hybrid'): Promise<string[]> => {
    const r = (await s.client.callTool({
      name: 'search',
      arguments: { query: 'chip', top_k: 10, mode, filter },
    })) as ToolText;
    expect(r.isError, textOf(r)).toBeFalsy();
    return (r.structuredContent as { results: Array<{ title: string }> }).results.map((h) => h.title).sort();
  };

  it('filters by source (case-insensitive) in every mode', async () => {
    for (const mode of ['hybrid', 'dense', 'bm25']) {
      expect(await titles({ source: 'techcrunch' }, mode)).toEqual(['Chip startups', 'Chip war heats up']);
    }
    expect(await titles({ source: ['Fortune', 'The Verge'] })).toEqual(['Chip sales fall', 'Chip tariffs']);
  });

  it('filters by category and by inclusive date range', async () => {
    expect(await titles({ category: 'business' })).toEqual(['Chip tariffs']);
    expect(await titles({ published_after: '2023-10-15', published_before: '2023-11-02' })).toEqual([
      'Chip sales fall',
      'Chip tariffs',
    ]);
    expect(await titles({ published_after: '2023-11-03T00:00:00Z' })).toEqual(['Chip startups']);
    expect(await titles({ source: 'TechCrunch', published_before: '2023-10-31' })).toEqual(['Chip war heats up']);
  });

  it('applies the filter before top-k (top_k 1 still finds the filtered document)', async () => {
    const r = (await s.client.callTool({
      name: 'search',
      arguments: { query: 'chip', top_k: 1, filter: { source: 'Fortune' } },
    })) as ToolText;
    expect((r.structuredContent as { results: Array<{ title: string }> }).results.map((h) => h.title)).toEqual([
      'Chip tariffs',
    ]);
  });

  it('list_corpora shows what a filter can select: sources, categories and dates', async () => {
    const r = (await s.client.callTool({ name: 'list_corpora', arguments: {} })) as ToolText;
    const [c] = (r.structuredContent as { corpora: Array<{ facets: unknown }> }).corpora;
    expect(c?.facets).toEqual({
      sources: [
        { value: 'TechCrunch', documents: 2 },
        { value: 'Fortune', documents: 1 },
        { value: 'The Verge', documents: 1 },
      ],
      categories: [
        { value: 'technology', documents: 3 },
        { value: 'business', documents: 1 },
      ],
      published: { first: '2023-10-01', last: '2023-11-20' },
    });
    expect(textOf(r)).toMatch(/filter source: TechCrunch \(2\), Fortune \(1\), The Verge \(1\)/);
    expect(textOf(r)).toMatch(/filter published_after \/ published_before: 2023-10-01 to 2023-11-20/);
  });

  it('says when the filter itself excluded everything, and when the query found nothing inside it', async () => {
    const none = (await s.client.callTool({
      name: 'search',
      arguments: { query: 'chip', filter: { source: 'No Such Paper' } },
    })) as ToolText;
    expect(none.isError).toBeFalsy();
    expect(textOf(none)).toMatch(/the filter excluded every passage of corpus news.*list_corpora/);
    expect((none.structuredContent as { filter_matches: number }).filter_matches).toBe(0);
    const inside = (await s.client.callTool({
      name: 'search',
      arguments: { query: 'zebra xylophone', mode: 'bm25', filter: { source: 'Fortune' } },
    })) as ToolText;
    expect(textOf(inside)).toMatch(/No passages matched the query among the 1 passages the filter allows/);
  });

  it('rejects bad filters with a clear error and treats injection attempts as plain values', async () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ published_after: 'last tuesday' }, /published_after must be a date/],
      [{ published_after: '2023-13-45' }, /published_after must be a date/],
      [{ published_after: '2023-12-01', published_before: '2023-01-01' }, /later than/],
      // the outside probe: a day that does not exist, and a range inverted by one day
      [{ published_after: '2023-02-30' }, /published_after must be a date/],
      [{ published_before: '2023-10-01T24:30:00Z' }, /published_before must be a date/],
      [{ published_after: '2023-10-02', published_before: '2023-10-01' }, /later than/],
      [{ publisher: 'x' }, /publisher|Unrecognized key/],
      [{ source: 42 }, /source/],
    ];
    for (const [filter, msg] of bad) {
      const r = (await s.client.callTool({ name: 'search', arguments: { query: 'chip', filter } })) as ToolText;
      expect(r.isError, JSON.stringify(filter)).toBe(true);
      expect(textOf(r)).toMatch(msg);
    }
    expect(await titles({ doc_id: "0' OR '1'='1" })).toEqual([]);
    expect(await titles({ source: "x') OR 1=1 --" })).toEqual([]);
    expect(await titles({ doc_id: ['0', '3'] })).toEqual(['Chip startups', 'Chip war heats up']);
  });
});

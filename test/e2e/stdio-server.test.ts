import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, writeJsonl } from '../helpers/build.js';
import { CLIENT_ERAS, connectStdio, runBin, textOf, type ToolText } from '../helpers/mcp.js';
import { BIN, makeTempDir } from '../helpers/paths.js';

const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'indexes');

const PASSAGES = [
  { id: 'p0', contents: '"Eiffel Tower"\nThe Eiffel Tower is a wrought-iron lattice tower in Paris, France.' },
  { id: 'p1', contents: '"Louvre"\nThe Louvre is the world\'s most-visited museum, in Paris.' },
  { id: 'p2', contents: '"Mount Fuji"\nMount Fuji is the highest mountain in Japan.' },
  { id: 'p3', contents: '"Tokyo"\nTokyo is the capital of Japan and its largest city.' },
];
const ARTICLES = [
  {
    id: 'a1',
    title: 'Long article',
    text: Array.from({ length: 40 }, (_, i) => `Sentence number ${i} talks about topic ${i % 4} in detail.`).join(' '),
    metadata: { source: 'Example' },
  },
];

beforeAll(async () => {
  await build({ name: 'wiki', input: writeJsonl(tmp.dir, 'wiki.jsonl', PASSAGES), format: 'wiki18', indexDir });
  await build({
    name: 'news',
    input: writeJsonl(tmp.dir, 'news.jsonl', ARTICLES),
    format: 'jsonl',
    indexDir,
    chunkSize: 60,
    chunkOverlap: 10,
  });
});
afterAll(tmp.cleanup);

// the same tests with a 1.x client (2025-11-25: initialize) and a v2 client pinned to 2026-07-28
describe.each(CLIENT_ERAS)('retriever-mcp over stdio (real %s-era client, real server process)', (era) => {
  it('lists the tools with input and output schemas and read-only hints', async () => {
    const s = await connectStdio(['--corpus', 'wiki', '--index-dir', indexDir], {}, era);
    try {
      const { tools } = await s.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['batch_search', 'fetch', 'list_corpora', 'search']);
      for (const t of tools) {
        expect(t.outputSchema, t.name).toBeDefined();
        expect(t.annotations?.readOnlyHint, t.name).toBe(true);
      }
    } finally {
      await s.close();
    }
  });

  it('search returns LLM text blocks and structured hits with BM25 ranks', async () => {
    const s = await connectStdio(['--corpus', 'wiki', '--index-dir', indexDir, '--top-k', '2'], {}, era);
    try {
      const r = (await s.client.callTool({
        name: 'search',
        arguments: { query: 'capital city of Japan' },
      })) as ToolText;
      expect(r.isError).toBeFalsy();
      expect(r.content?.[0]?.text).toBe(
        'Doc 1 [id p3] (Title: Tokyo) Tokyo is the capital of Japan and its largest city.',
      );
      const sc = r.structuredContent as { corpus: string; mode: string; results: Array<Record<string, unknown>> };
      expect(sc.corpus).toBe('wiki');
      expect(sc.mode).toBe('bm25');
      expect(sc.results).toHaveLength(2);
      expect(sc.results[0]).toMatchObject({ rank: 1, id: 'p3', doc_id: 'p3', title: 'Tokyo', bm25_rank: 1 });
      expect(sc.results[0]?.['score']).toBe(sc.results[0]?.['bm25_score']);
      expect(sc.results[0]?.['dense_rank']).toBeUndefined();
    } finally {
      await s.close();
    }
  });

  it('a text-only client reads the id from the text and fetches it', async () => {
    const s = await connectStdio(['--corpus', 'wiki', '--index-dir', indexDir, '--top-k', '2'], {}, era);
    try {
      const r = (await s.client.callTool({ name: 'search', arguments: { query: 'capital of Japan' } })) as ToolText;
      const texts = (r.content ?? []).map((c) => c.text ?? '');
      // what a Search-R1-style parser reads (Doc N … (Title: …)) and the id beside it
      const parsed = texts.map((t) => /^Doc (\d+) \[id ([^\]]+)\] \(Title: (.*?)\) (.*)$/s.exec(t));
      expect(parsed.every((m) => m !== null)).toBe(true);
      expect(parsed.map((m) => Number(m?.[1]))).toEqual([1, 2]);
      const [, , id, title, text] = parsed[0] as RegExpExecArray;
      const f = (await s.client.callTool({ name: 'fetch', arguments: { id } })) as ToolText;
      expect(f.isError).toBeFalsy();
      expect(f.content?.[0]?.text).toBe(`[${id}] (Title: ${title}) ${text}`);
    } finally {
      await s.close();
    }
  });

  it('with --resource-links, links each hit to its passage as a resource, which reads back as fetch gives it', async () => {
    const s = await connectStdio(
      ['--corpus', 'wiki', '--index-dir', indexDir, '--top-k', '2', '--resource-links'],
      {},
      era,
    );
    try {
      const r = (await s.client.callTool({ name: 'search', arguments: { query: 'Eiffel Tower Paris' } })) as {
        content: Array<{ type: string; text?: string; uri?: string; name?: string }>;
      };
      // the text blocks come first, as Search-R1-style parsing reads them; the links after
      expect(r.content.map((c) => c.type)).toEqual(['text', 'text', 'resource_link', 'resource_link']);
      const link = r.content[2];
      expect(link?.uri).toBe(`retriever://wiki/chunks/${encodeURIComponent(link?.name ?? '')}`);
      const { resourceTemplates } = await s.client.listResourceTemplates();
      expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['retriever://{corpus}/chunks/{id}']);
      const read = await s.client.readResource({ uri: link?.uri ?? '' });
      const f = (await s.client.callTool({ name: 'fetch', arguments: { id: link?.name } })) as ToolText;
      expect(read.contents[0]).toMatchObject({ uri: link?.uri, mimeType: 'text/plain', text: textOf(f) });
      await expect(s.client.readResource({ uri: 'retriever://wiki/chunks/no-such-id' })).rejects.toThrow(/no passage/);
      await expect(s.client.readResource({ uri: 'retriever://nope/chunks/p0' })).rejects.toThrow(/unknown corpus/);
    } finally {
      await s.close();
    }
  });

  it('batch_search answers each query in order; fetch and list_corpora work across two corpora', async () => {
    const s = await connectStdio(['--corpus', 'wiki', '--corpus', 'news', '--index-dir', indexDir], {}, era);
    try {
      const b = (await s.client.callTool({
        name: 'batch_search',
        arguments: { queries: ['museum in Paris', 'highest mountain'], top_k: 1 },
      })) as ToolText;
      const bs = b.structuredContent as { results: Array<Array<{ id: string }>> };
      expect(bs.results.map((r) => r.map((h) => h.id))).toEqual([['p1'], ['p2']]);

      const n = (await s.client.callTool({
        name: 'search',
        arguments: { query: 'topic 3 sentence number 39', corpus: 'news', top_k: 1 },
      })) as ToolText;
      const hit = (n.structuredContent as { results: Array<{ id: string; doc_id: string; metadata: unknown }> })
        .results[0];
      expect(hit?.doc_id).toBe('a1');
      expect(hit?.id).toMatch(/^a1#\d+$/);
      expect(hit?.metadata).toEqual({ source: 'Example' });

      const f = (await s.client.callTool({ name: 'fetch', arguments: { id: hit?.id, around: 1 } })) as ToolText;
      const fc = f.structuredContent as {
        corpus: string;
        chunks: Array<{ id: string; position: number }>;
        missing: string[];
      };
      expect(fc.corpus).toBe('news');
      expect(fc.chunks.length).toBeGreaterThanOrEqual(2);
      expect(fc.chunks.map((c) => c.position)).toEqual([...fc.chunks.map((c) => c.position)].sort((a, c) => a - c));

      const doc = (await s.client.callTool({ name: 'fetch', arguments: { doc_id: 'a1' } })) as ToolText;
      const chunks = (doc.structuredContent as { chunks: Array<{ position: number }> }).chunks;
      expect(chunks.map((c) => c.position)).toEqual(chunks.map((_, i) => i));

      const ids = (await s.client.callTool({ name: 'fetch', arguments: { ids: ['p0', 'nope'] } })) as ToolText;
      expect(ids.structuredContent).toMatchObject({ chunks: [{ id: 'p0', title: 'Eiffel Tower' }], missing: ['nope'] });

      const lc = (await s.client.callTool({ name: 'list_corpora', arguments: {} })) as ToolText;
      const corpora = (lc.structuredContent as { corpora: Array<Record<string, unknown>> }).corpora;
      expect(corpora.map((c) => [c['name'], c['chunks'], c['modes']])).toEqual([
        ['wiki', 4, ['bm25']],
        ['news', chunks.length, ['bm25']],
      ]);
    } finally {
      await s.close();
    }
  });

  it('turns bad arguments into isError results and keeps serving', async () => {
    const s = await connectStdio(['--corpus', 'wiki', '--index-dir', indexDir], {}, era);
    try {
      const bad: Array<[Record<string, unknown>, RegExp]> = [
        [{ query: '   ' }, /query is empty/],
        [{ query: 'x', top_k: 0 }, /top_k/],
        [{ query: 'x', top_k: 2.5 }, /top_k/],
        [{ query: 'x', mode: 'dense' }, /not available for corpus wiki.*--no-dense/],
        [{ query: 'x', corpus: 'other' }, /unknown corpus "other": this server serves wiki/],
        [{ query: 'x'.repeat(10_000) }, /query/],
      ];
      for (const [args, msg] of bad) {
        const r = (await s.client.callTool({ name: 'search', arguments: args })) as ToolText;
        expect(r.isError, JSON.stringify(args).slice(0, 60)).toBe(true);
        expect(textOf(r)).toMatch(msg);
      }
      const f = (await s.client.callTool({ name: 'fetch', arguments: {} })) as ToolText;
      expect(f.isError).toBe(true);
      expect(textOf(f)).toMatch(/exactly one of/);
      const ok = (await s.client.callTool({ name: 'search', arguments: { query: 'Eiffel' } })) as ToolText;
      expect(ok.isError).toBeFalsy();
    } finally {
      await s.close();
    }
  });

  it('fetch and filters treat hostile ids as plain values (parameterised SQL, served corpora only)', async () => {
    const s = await connectStdio(['--corpus', 'wiki', '--index-dir', indexDir], {}, era);
    try {
      const hostile = ["p0' OR '1'='1", 'p0"; DROP TABLE chunks; --', '../../wiki/manifest.json', '%', '*', 'p%'];
      const f = (await s.client.callTool({ name: 'fetch', arguments: { ids: hostile } })) as ToolText;
      expect(f.structuredContent).toMatchObject({ chunks: [], missing: hostile });
      const d = (await s.client.callTool({ name: 'fetch', arguments: { doc_id: "x' OR 1=1 --" } })) as ToolText;
      expect(d.structuredContent).toMatchObject({ chunks: [] });
      const c = (await s.client.callTool({ name: 'fetch', arguments: { id: 'p0', corpus: '../news' } })) as ToolText;
      expect(c.isError).toBe(true);
      expect(textOf(c)).toMatch(/unknown corpus/);
      // the table is still there
      const ok = (await s.client.callTool({ name: 'fetch', arguments: { id: 'p0' } })) as ToolText;
      expect(ok.structuredContent).toMatchObject({ chunks: [{ id: 'p0' }] });
    } finally {
      await s.close();
    }
  });
});

describe('retriever-mcp over stdio: refusals before serving', () => {
  it('refuses to start without an index, naming what exists and the build command', () => {
    const r = runBin(BIN.server, ['--corpus', 'absent', '--index-dir', indexDir]);
    expect(r.status).not.toBe(0);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/no index absent in .*It holds: news, wiki\./);
    expect(lines[0]).not.toMatch(/Did you mean/);
    expect(lines[0]).toContain(
      `retriever-mcp build --name absent --input PATH --format FORMAT --index-dir ${indexDir}`,
    );
    const typo = runBin(BIN.server, ['--corpus', 'wikki', '--index-dir', indexDir]);
    expect(typo.stderr).toMatch(/no index wikki in .*Did you mean --corpus wiki\?/);
  });

  it('rejects unknown flags and bad corpus names in one line', () => {
    const r = runBin(BIN.server, ['--corpus', 'wiki', '--index-dir', indexDir, '--bogus']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/Unknown argument: bogus/);
    const n = runBin(BIN.server, ['--corpus', '../etc', '--index-dir', indexDir]);
    expect(n.status).toBe(2);
    expect(n.stderr).toMatch(/invalid corpus name/);
  });
});

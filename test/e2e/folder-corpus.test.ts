import { mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TINY_MODEL } from '../helpers/encoder.js';
import { makePdf } from '../helpers/make-pdf.js';
import { connectStdio, runBinAsync } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir } from '../helpers/paths.js';

/**
 * A folder of Markdown, HTML, PDF and text as a corpus, built and served as a
 * user would: `build --name notes --input ./notes`, then an MCP client's
 * search and fetch. Unreadable files are listed with their reason; what the
 * reader must never do (follow a symlink out, read hidden folders or
 * node_modules) leaves a trace a test can look for.
 */
const tmp = makeTempDir();
const notes = join(tmp.dir, 'notes');
const indexDir = join(tmp.dir, 'indexes');
const outside = join(tmp.dir, 'outside.md');
const MTIME = new Date('2024-03-05T10:00:00Z');

function writeNotes(): void {
  mkdirSync(join(notes, 'papers'), { recursive: true });
  mkdirSync(join(notes, 'web'), { recursive: true });
  mkdirSync(join(notes, '.git'), { recursive: true });
  mkdirSync(join(notes, 'node_modules', 'pkg'), { recursive: true });
  writeFileSync(
    join(notes, 'bees.md'),
    '---\ntitle: "Field notes on bees"\n---\n# Ignored first heading\n\nIntro with a [link](https://example.org) and **bold** words, written over a whole summer of watching the hives in the orchard behind the old farmhouse.\n\n' +
      '## Waggle dance\n\nHoney bees communicate through the waggle dance, which encodes direction and distance.\n\n' +
      '## Swarming\n\nA swarm leaves the hive with the old queen in late spring.\n',
  );
  writeFileSync(
    join(notes, 'web', 'lighthouse.html'),
    '<html><head><title>The Lighthouse Page</title><style>.pharos{color:red}</style><script>var hiddenScript = 1;</script></head>' +
      '<body><nav>Home</nav><h1>Lighthouses</h1><p>The Pharos of Alexandria was among the Seven Wonders &amp; stood for centuries.</p></body></html>',
  );
  writeFileSync(join(notes, 'volcano.txt'), 'Basaltic volcanoes erupt runny lava that travels far.\n');
  writeFileSync(
    join(notes, 'papers', 'glaciers.pdf'),
    makePdf(
      [
        [
          'Glaciers carve valleys over millennia.',
          'Ice flows downhill under its own weight.',
          'A glacier forms where snow outlasts the summer, year after year.',
          'Compressed snow turns to firn and then to dense blue ice.',
          'Crevasses open where the ice bends over steep ground.',
          'Meltwater runs beneath the ice and lubricates its slide.',
        ],
        ['Moraines are ridges of debris left by retreating glaciers.'],
      ],
      { title: 'A Study of Glaciers' },
    ),
  );
  writeFileSync(join(notes, 'papers', 'scan.pdf'), makePdf([[], []]));
  writeFileSync(join(notes, 'papers', 'broken.pdf'), '%PDF-1.4\nthis is not a PDF body at all\n');
  writeFileSync(join(notes, 'binary.txt'), Buffer.from([0x41, 0x00, 0x42, 0x00]));
  writeFileSync(join(notes, 'big.md'), `# Big\n\n${'filler words here. '.repeat(80_000)}`);
  writeFileSync(join(notes, '.git', 'secret.md'), 'hiddenword in a hidden folder');
  writeFileSync(join(notes, 'node_modules', 'pkg', 'readme.md'), 'dependencyword in node_modules');
  writeFileSync(join(notes, 'drafts.md'), 'draftword that --exclude leaves out');
  writeFileSync(outside, 'outsideword beyond the folder');
  symlinkSync(outside, join(notes, 'link.md'));
  for (const f of ['bees.md', 'web/lighthouse.html', 'volcano.txt', 'papers/glaciers.pdf']) {
    utimesSync(join(notes, f), MTIME, MTIME);
  }
}

let build: { status: number | null; stderr: string };
beforeAll(async () => {
  if (!HAS_SHARED) return;
  writeNotes();
  build = await runBinAsync(BIN.build, [
    ...['--name', 'notes', '--input', notes, '--index-dir', indexDir, '--model-path', TINY_MODEL],
    ...['--exclude', 'drafts.md', '--max-file-mb', '1', '--chunk-size', '64', '--chunk-overlap', '0'],
  ]);
}, 120_000);
afterAll(() => tmp.cleanup());

describe.skipIf(!HAS_SHARED)('a folder of documents as a corpus', () => {
  it('builds, listing each file it could not read with the reason', () => {
    expect(build.status, build.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(indexDir, 'notes', 'manifest.json'), 'utf8')) as {
      corpus: {
        format: string;
        documents: number;
        skipped: { count: number; files: Array<{ path: string; reason: string }> };
      };
    };
    expect(manifest.corpus.format).toBe('files');
    expect(manifest.corpus.documents).toBe(4);
    const reasons = Object.fromEntries(manifest.corpus.skipped.files.map((f) => [f.path, f.reason]));
    expect(Object.keys(reasons).sort()).toEqual([
      'big.md',
      'binary.txt',
      'link.md',
      'papers/broken.pdf',
      'papers/scan.pdf',
    ]);
    expect(reasons['papers/scan.pdf']).toMatch(/no text layer.*OCR/);
    expect(reasons['papers/broken.pdf']).toMatch(/cannot open/);
    expect(reasons['binary.txt']).toMatch(/NUL bytes/);
    expect(reasons['big.md']).toMatch(/over the 1048576-byte limit/);
    expect(reasons['link.md']).toMatch(/symbolic link/);
    // and the build's own summary names them for the user
    expect(build.stderr).toMatch(/5 file\(s\) were not indexed:\n {2}big\.md: /);
    // again after the summary line, where a long build's end leaves the eye
    const end = build.stderr.slice(build.stderr.lastIndexOf('built notes:'));
    expect(end).toMatch(/^built notes: [^\n]*\n5 file\(s\) were not indexed:\n {2}big\.md: /);
    for (const f of ['binary.txt', 'link.md', 'papers/broken.pdf', 'papers/scan.pdf'])
      expect(end).toContain(`\n  ${f}: `);
  });

  it('serves paths as ids, titles from the documents, dates from the files, pages for PDFs', async () => {
    const { client, close } = await connectStdio([
      '--corpus',
      'notes',
      '--index-dir',
      indexDir,
      '--model-path',
      TINY_MODEL,
    ]);
    try {
      const search = async (query: string) =>
        (await client.callTool({ name: 'search', arguments: { query, top_k: 20, mode: 'bm25' } })) as unknown as {
          structuredContent: {
            results: Array<{
              id: string;
              doc_id: string;
              title: string;
              text: string;
              metadata?: Record<string, unknown>;
            }>;
          };
          content: Array<{ text: string }>;
        };
      const moraine = await search('moraines debris retreating');
      const hit = moraine.structuredContent.results[0];
      expect(hit?.doc_id).toBe('papers/glaciers.pdf');
      expect(hit?.title).toBe('A Study of Glaciers');
      // the page-2 sentence shares its chunk with page 1's last line
      expect(hit?.metadata).toMatchObject({
        source: 'papers',
        type: 'pdf',
        pages: '1-2',
        published_at: MTIME.toISOString(),
      });
      expect(hit?.metadata).not.toHaveProperty('chunk_pages');
      expect(moraine.content[0]?.text).toMatch(/\(Title: A Study of Glaciers; Source: papers; 2024-03-05; pages 1-2\)/);
      const pdf = (await client.callTool({
        name: 'fetch',
        arguments: { doc_id: 'papers/glaciers.pdf' },
      })) as unknown as {
        structuredContent: { chunks: Array<{ text: string; metadata?: Record<string, unknown> }> };
      };
      expect(pdf.structuredContent.chunks.map((c) => c.metadata?.['pages'])).toEqual(['1', '1-2']);

      const bees = (await search('waggle dance direction')).structuredContent.results[0];
      expect(bees?.doc_id).toBe('bees.md');
      expect(bees?.title).toBe('Field notes on bees');
      expect(bees?.metadata?.['source']).toBe('notes');
      // the chunker breaks at headings: the dance and the swarm are chunks of their own
      expect(bees?.text).toMatch(/^Waggle dance\n+Honey bees/);
      expect(bees?.text).not.toMatch(/swarm/i);
      expect(bees?.text).not.toMatch(/https:/);

      const light = (await search('Pharos Alexandria wonders')).structuredContent.results[0];
      expect(light?.doc_id).toBe('web/lighthouse.html');
      expect(light?.title).toBe('The Lighthouse Page');
      expect(light?.text).toContain('Seven Wonders & stood');

      for (const word of ['hiddenword', 'dependencyword', 'draftword', 'outsideword', 'hiddenScript', 'pharos{color']) {
        expect((await search(word)).structuredContent.results.map((r) => r.text).join(' '), word).not.toContain(word);
      }

      const fetched = (await client.callTool({ name: 'fetch', arguments: { doc_id: 'volcano.txt' } })) as unknown as {
        structuredContent: { chunks: Array<{ id: string; title: string; text: string }> };
      };
      expect(fetched.structuredContent.chunks[0]).toMatchObject({
        title: 'volcano.txt',
        text: expect.stringContaining('runny lava'),
      });
    } finally {
      await close();
    }
  });

  it('says what to do when the input is a folder of nothing it reads, or a folder under a file format', async () => {
    const empty = join(tmp.dir, 'empty');
    mkdirSync(join(empty, 'sub'), { recursive: true });
    writeFileSync(join(empty, 'sub', 'data.csv'), 'a,b\n');
    const none = await runBinAsync(BIN.build, ['--name', 'e', '--input', empty, '--index-dir', indexDir, '--no-dense']);
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/holds no Markdown, HTML, PDF or text file: check --input/);
    const asJsonl = await runBinAsync(BIN.build, [
      ...['--name', 'e', '--input', notes, '--format', 'jsonl', '--index-dir', indexDir, '--no-dense'],
    ]);
    expect(asJsonl.status).toBe(2);
    expect(asJsonl.stderr).toMatch(/is a folder, and --format jsonl reads one file: pass --format files/);
    const badGlob = await runBinAsync(BIN.build, [
      ...['--name', 'e', '--input', notes, '--include', '{a,b', '--index-dir', indexDir, '--no-dense'],
    ]);
    expect(badGlob.status).toBe(2);
    expect(badGlob.stderr).toMatch(/glob "\{a,b" opens a "\{" it does not close/);
  });
});

import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDeflate } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { extractHtml, MAX_HTML_DEPTH } from '../../src/ingest/files/html.js';
import { extractMarkdown } from '../../src/ingest/files/markdown.js';
import { readFolderBatches, type FolderReadOptions } from '../../src/ingest/files/read-folder.js';
import { DEFAULT_FOLDER, type Skipped } from '../../src/ingest/files/walk.js';
import { MAX_TITLE_CHARS } from '../../src/ingest/title.js';
import type { SourceDocument } from '../../src/ingest/types.js';
import { build } from '../helpers/build.js';
import { makeTempDir } from '../helpers/paths.js';

// Reliability V, items 3-8: one file name, one swapped path, one special file or one hostile
// document must not end a folder build, lead it outside its folder, hold it, or blow it up.
const tmp = makeTempDir();
afterAll(tmp.cleanup);
let n = 0;

function folder(files: Record<string, string | Buffer>): string {
  const root = join(tmp.dir, `f${n++}`);
  mkdirSync(root, { recursive: true });
  for (const [rel, body] of Object.entries(files)) {
    const path = join(root, rel);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, body);
  }
  return root;
}

async function readAll(
  root: string,
  over: Partial<FolderReadOptions> = {},
): Promise<{ docs: SourceDocument[]; skipped: Skipped[] }> {
  const docs: SourceDocument[] = [];
  const skipped: Skipped[] = [];
  for await (const batch of readFolderBatches(root, { ...DEFAULT_FOLDER, onSkipped: (s) => skipped.push(s), ...over }))
    docs.push(...batch);
  return { docs, skipped };
}

describe('a folder build with hostile names, paths and files (Reliability V)', () => {
  it('reads a file whose name is not UTF-8 by its raw name, its id escaping the bytes (item 3)', async () => {
    const root = folder({ 'good.md': '# Good\ntext one' });
    writeFileSync(Buffer.from(join(root, 'bad\xffname.md'), 'latin1'), '# Bad\ntext two');
    const { docs, skipped } = await readAll(root);
    expect(skipped).toEqual([]);
    expect(docs.map((d) => d.id).sort()).toEqual(['bad%FFname.md', 'good.md']);
    expect(docs.find((d) => d.id === 'bad%FFname.md')?.text).toBe('Bad\ntext two');
    const summary = await build({ name: 'badname', input: root, format: 'files', indexDir: join(tmp.dir, 'idx') });
    expect(summary.manifest.corpus.documents).toBe(2);
  });

  it('never reads outside the folder through a subfolder swapped for a link mid-build (item 4)', async () => {
    const outside = folder({ 'secret.md': '# Secret\nthe outside words' });
    const root = folder({ 'a.md': '# A\nfirst', 'sub/secret.md': '# Inside\nthe inside words' });
    let swapped = false;
    const { docs, skipped } = await readAll(root, {
      // after a.md is read and before sub/secret.md is opened, as a walk of 50,000 files leaves time to
      onProgress: () => {
        if (swapped) return;
        swapped = true;
        renameSync(join(root, 'sub'), join(root, 'sub-old'));
        symlinkSync(outside, join(root, 'sub'));
      },
    });
    expect(docs.map((d) => d.id)).toEqual(['a.md']);
    expect(docs.some((d) => d.text.includes('outside'))).toBe(false);
    expect(skipped).toEqual([{ rel: 'sub/secret.md', reason: expect.stringMatching(/outside the folder/) as string }]);
  });

  it('lists FIFOs present from the start, and passes over one swapped in without waiting on it (item 5)', async () => {
    const root = folder({ 'a.md': '# A\none', 'b.md': '# B\ntwo' });
    execFileSync('mkfifo', [join(root, 'pipe.md')]);
    const t0 = Date.now();
    let swapped = false;
    const { docs, skipped } = await readAll(root, {
      onProgress: () => {
        if (swapped) return;
        swapped = true;
        renameSync(join(root, 'b.md'), join(root, 'b-old.md'));
        execFileSync('mkfifo', [join(root, 'b.md')]);
      },
    });
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(docs.map((d) => d.id)).toEqual(['a.md']);
    expect(skipped).toEqual(
      expect.arrayContaining([
        { rel: 'pipe.md', reason: 'a FIFO (named pipe), not a regular file' },
        { rel: 'b.md', reason: expect.stringMatching(/no longer a regular file/) as string },
      ]),
    );
  });

  it('reads inline Markdown and headings in time linear in their size (item 6)', () => {
    // 29.7 s for 128 KB of `**a ` before, 14× that for 4× the size; the bounds leave 50× headroom
    for (const source of [
      '**a '.repeat(32_000),
      '_a '.repeat(43_000),
      `# a${' '.repeat(128_000)}b`,
      '[a '.repeat(43_000),
    ]) {
      const t0 = performance.now();
      const x = extractMarkdown(source);
      expect(performance.now() - t0, source.slice(0, 8)).toBeLessThan(10_000);
      expect(x.text.length).toBeGreaterThan(0);
    }
  });

  it('refuses HTML nested past its cap at once, naming why (item 6)', () => {
    const t0 = performance.now();
    expect(() => extractHtml(`${'<div>'.repeat(200_000)}x${'</div>'.repeat(200_000)}`)).toThrow(
      new RegExp(`more than ${MAX_HTML_DEPTH} deep`),
    );
    expect(performance.now() - t0).toBeLessThan(10_000);
    // nesting a page really has reads as before
    expect(extractHtml(`${'<div>'.repeat(500)}deep text${'</div>'.repeat(500)}`).text).toBe('deep text');
  });

  it('skips a PDF whose stream inflates past its memory cap, and one past its time cap (item 7)', async () => {
    const root = folder({ 'a.md': '# A\nfine' });
    writeFileSync(join(root, 'bomb.pdf'), await flatePdf(Buffer.alloc(16 * 2 ** 20, 0x20), 48)); // 768 MB of blanks
    const { docs, skipped } = await readAll(root, {
      pdfLimits: { timeMs: () => 120_000, growthBytes: 192 * 2 ** 20 },
    });
    expect(docs.map((d) => d.id)).toEqual(['a.md']);
    expect(skipped).toEqual([{ rel: 'bomb.pdf', reason: expect.stringMatching(/over 192 MiB of memory/) as string }]);

    const slow = folder({ 'a.md': '# A\nfine' });
    const ops = Buffer.from('BT /F1 12 Tf 72 720 Td (lorem ipsum) Tj ET\n'.repeat(100_000));
    writeFileSync(join(slow, 'ops.pdf'), await flatePdf(ops, 40)); // 170 MB of text operators
    const late = await readAll(slow, { pdfLimits: { timeMs: () => 1500, growthBytes: 2 ** 30 } });
    expect(late.skipped).toEqual([{ rel: 'ops.pdf', reason: expect.stringMatching(/took over 2 s/) as string }]);
  }, 120_000);

  it('stops inside a PDF within 2 s of the stop (item 7)', async () => {
    const root = folder({});
    const ops = Buffer.from('BT /F1 12 Tf 72 720 Td (lorem ipsum) Tj ET\n'.repeat(100_000));
    writeFileSync(join(root, 'ops.pdf'), await flatePdf(ops, 40));
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error('stopped by the test')), 1000);
    const t0 = Date.now();
    await expect(readAll(root, { signal: stop.signal })).rejects.toThrow('stopped by the test');
    expect(Date.now() - t0).toBeLessThan(3000 + 1000);
  }, 60_000);

  it('caps a title read from a heading, an unclosed <title> and front matter (item 8)', async () => {
    const long = 'Very long heading words '.repeat(10_000); // 240 KB
    const root = folder({
      'heading.md': `# ${long}\n${'body text. '.repeat(2000)}`,
      'page.html': `<html><title>${long}<body><p>${'body text. '.repeat(2000)}</p>`,
      'front.md': `---\ntitle: ${long}\n---\n${'body text. '.repeat(2000)}`,
    });
    const { docs } = await readAll(root);
    expect(docs).toHaveLength(3);
    for (const d of docs) {
      expect(d.title.length, d.id).toBeLessThanOrEqual(MAX_TITLE_CHARS + 1);
      expect(d.title).toMatch(/^Very long heading words .*…$/);
    }
    const summary = await build({
      name: 'titles',
      input: root,
      format: 'files',
      indexDir: join(tmp.dir, 'idx'),
      chunkSize: 500,
    });
    // 546 KB of text, about 100k words: chunks and tokens follow the text, not the title times
    // each chunk (a 240 KB heading once gave 1.4 MB of Markdown 1,311 chunks and 52.75M tokens)
    expect(summary.manifest.corpus.chunks).toBeLessThan(400);
    expect(summary.manifest.corpus.tokens).toBeLessThan(400_000);
  });
});

/** A one-page PDF whose content stream is `unit` repeated `times` times, deflated. */
async function flatePdf(unit: Buffer, times: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const d = createDeflate({ level: 9 });
  d.on('data', (c: Buffer) => chunks.push(c));
  for (let i = 0; i < times; i++) if (!d.write(unit)) await new Promise((r) => d.once('drain', r));
  await new Promise<void>((r) => d.end(r));
  const stream = Buffer.concat(chunks);
  const objects = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [4 0 R] /Count 1 >>'),
    Buffer.concat([
      Buffer.from(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`),
      stream,
      Buffer.from('\nendstream'),
    ]),
    Buffer.from(
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 3 0 R >>',
    ),
    Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>'),
  ];
  const parts = [Buffer.from('%PDF-1.4\n')];
  let at = parts[0]?.length ?? 0;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(at);
    const o = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), body, Buffer.from('\nendobj\n')]);
    parts.push(o);
    at += o.length;
  });
  const xref =
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n` +
    offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('') +
    `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`;
  parts.push(Buffer.from(xref));
  return Buffer.concat(parts);
}

import { describe, expect, it } from 'vitest';
import { chunkDocument, wordCounter } from '../../src/ingest/chunker.js';
import { globMatcher } from '../../src/ingest/files/globs.js';
import { extractHtml } from '../../src/ingest/files/html.js';
import { extractMarkdown } from '../../src/ingest/files/markdown.js';
import { extractPdf } from '../../src/ingest/files/pdf.js';
import { makePdf } from '../helpers/make-pdf.js';

describe('globs over relative paths', () => {
  const m = (globs: string[], path: string): boolean => globMatcher(globs)(path);
  it('match names at any depth without a slash, and anchor paths with one', () => {
    expect(m(['*.pdf'], 'a/b/c.pdf')).toBe(true);
    expect(m(['*.pdf'], 'a/b/c.md')).toBe(false);
    expect(m(['drafts'], 'x/drafts/y.md')).toBe(true);
    expect(m(['papers/*.pdf'], 'papers/a.pdf')).toBe(true);
    expect(m(['papers/*.pdf'], 'x/papers/a.pdf')).toBe(false);
    expect(m(['**/notes/**'], 'a/notes/b/c.md')).toBe(true);
    expect(m(['{a,b}/*.md'], 'b/x.md')).toBe(true);
    expect(m(['?.md'], 'ab.md')).toBe(false);
    expect(m(['a.md'], 'a+md')).toBe(false);
  });
});

describe('Markdown as the text a model reads', () => {
  it('takes the title from front matter, else the first level-1 heading, and marks sections', () => {
    const x = extractMarkdown('---\ntitle: "Notes"\n---\n## Sub\ntext\n# Main\nmore [a link](http://x) and `code`\n');
    expect(x.title).toBe('Notes');
    expect(x.text).toBe('Sub\ntext\nMain\nmore a link and code');
    expect(x.sections.map((s) => x.text.slice(s, s + 4))).toEqual(['Sub\n', 'Main']);
    expect(extractMarkdown('## Second\n# First\n').title).toBe('First');
    expect(extractMarkdown('Setext\n======\nbody').title).toBe('Setext');
    expect(extractMarkdown('no heading').title).toBeUndefined();
  });

  it('keeps code blocks as they are, headings inside them included', () => {
    const x = extractMarkdown('# T\n```\n# not a heading\n```\n');
    expect(x.text).toBe('T\n# not a heading');
    expect(x.sections).toEqual([0]);
  });
});

describe('HTML as the text a reader sees', () => {
  it('drops scripts, styles and the head, breaks at blocks, decodes entities', () => {
    const x = extractHtml(
      '<html><head><title> The  Page </title><script>var s = 1;</script><style>p{}</style></head>' +
        '<body><h1>Head</h1><p>One &amp; two</p><p>three<br>four</p><ul><li>a</li><li>b</li></ul><pre>  kept\n  spaces</pre></body></html>',
    );
    expect(x.title).toBe('The Page');
    expect(x.text).toBe('Head\n\nOne & two\n\nthree\nfour\n\na\nb\n\n  kept\n  spaces');
    expect(x.sections).toEqual([0]);
    expect(extractHtml('<h1>Only heading</h1><p>x</p>').title).toBe('Only heading');
  });
});

describe('PDF text through pdf.js', () => {
  it('reads each page, records where it starts, and takes the document title', async () => {
    const x = await extractPdf(makePdf([['first page'], ['second page']], { title: 'T' }));
    expect(x.title).toBe('T');
    expect(x.text).toBe('first page\n\nsecond page');
    expect(x.pages).toEqual([0, 12]);
  });

  it('refuses a PDF with no text layer, naming OCR', async () => {
    await expect(extractPdf(makePdf([[]]))).rejects.toThrow(/no text layer.*OCR/);
  });
});

describe('chunking a structured document', () => {
  const doc = (text: string, sections: number[], pages?: number[]) => ({
    id: 'd',
    title: '',
    text,
    structure: { sections, ...(pages ? { pages } : {}) },
  });
  const opts = { size: 12, overlap: 2, counter: wordCounter };

  it('starts a chunk at a heading, and carries no overlap across it', () => {
    const text = 'Alpha\none two three four five six.\nBeta\nseven eight nine ten eleven.';
    const pieces = chunkDocument(doc(text, [0, text.indexOf('Beta')]), opts);
    expect(pieces.map((p) => p.contents)).toEqual([
      'Alpha\none two three four five six.',
      'Beta\nseven eight nine ten eleven.',
    ]);
  });

  it('the same text without structure is packed as before (no break at the heading)', () => {
    const text = 'Alpha\none two three four five six.\nBeta\nseven eight nine ten eleven.';
    const plain = chunkDocument({ id: 'd', title: '', text }, opts);
    expect(plain[0]?.contents).toContain('Beta');
  });

  it('names the pages each chunk comes from', () => {
    const text = 'one two three.\n\nfour five six.\n\nseven eight nine ten eleven twelve.';
    const pages = [0, text.indexOf('four'), text.indexOf('seven')];
    const pieces = chunkDocument(doc(text, [], pages), { size: 8, overlap: 0, counter: wordCounter });
    expect(pieces.map((p) => p.pages)).toEqual(['1-2', '3']);
  });
});

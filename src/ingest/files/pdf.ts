import { capTitle } from '../title.js';
import type { ExtractedText } from './markdown.js';

/**
 * The one importer of Mozilla's pdf.js (pdfjs-dist), loaded the first time a
 * folder holds a PDF: 4 MB of JavaScript that no other build or server start
 * should pay for. The legacy build is the one that runs in Node.
 */
type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjs: Promise<PdfJs> | undefined;

function loadPdfJs(): Promise<PdfJs> {
  pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs');
  return pdfjs;
}

/** A PDF without a text layer (a scan) or one pdf.js cannot open. */
export class PdfTextError extends Error {}

/**
 * The text layer of a PDF, page by page (pages separated by a blank line,
 * each page's start recorded so chunks can name their pages), and its title
 * from the document information. A PDF with no text at all is an error: it
 * is most likely a scan, which needs OCR first.
 */
export async function extractPdf(bytes: Uint8Array): Promise<ExtractedText> {
  const lib = await loadPdfJs();
  let doc;
  try {
    doc = await lib.getDocument({
      // a copy: pdf.js takes a plain Uint8Array (not a Buffer) and may transfer it to its worker
      data: new Uint8Array(bytes),
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      stopAtErrors: false,
      // pdf.js prints its warnings with console.log: on a stdio server that is stdout, MCP's own
      verbosity: lib.VerbosityLevel.ERRORS,
    }).promise;
  } catch (err) {
    throw new PdfTextError(`pdf.js cannot open it (${(err as Error).message})`);
  }
  try {
    const pages: number[] = [];
    let text = '';
    for (let p = 1; p <= doc.numPages; p++) {
      const page = await doc.getPage(p);
      const content = await page.getTextContent();
      let pageText = '';
      for (const item of content.items) {
        if (!('str' in item)) continue;
        pageText += item.str;
        if (item.hasEOL) pageText += '\n';
        else if (item.str !== '' && !/\s$/.test(item.str)) pageText += ' ';
      }
      page.cleanup();
      pageText = pageText.replace(/[ \t]+\n/g, '\n').trim();
      if (text !== '' && pageText !== '') text += '\n\n';
      pages.push(text.length);
      text += pageText;
    }
    if (text.trim() === '') {
      throw new PdfTextError(`no text layer in ${doc.numPages} page(s) (a scan?): run OCR on it first`);
    }
    const meta = await doc.getMetadata().catch(() => undefined);
    const info = (meta?.info ?? {}) as { Title?: unknown };
    const title = capTitle(typeof info.Title === 'string' ? info.Title.trim() : '') || (await firstPageHeading(doc));
    return { ...(title ? { title } : {}), text, sections: [], pages };
  } finally {
    await doc.destroy();
  }
}

/**
 * The heading of a PDF's first page, for one whose /Title is empty (most exported papers and
 * reports): the run of text set in the largest type among the page's top lines.
 */
async function firstPageHeading(doc: { numPages: number; getPage(n: number): Promise<PdfPage> }): Promise<string> {
  if (doc.numPages < 1) return '';
  const page = await doc.getPage(1);
  const { items } = await page.getTextContent();
  page.cleanup();
  const lines = items
    .filter((i): i is PdfTextItem => 'str' in i && i.str.trim() !== '')
    .slice(0, 60)
    .map((i) => ({ str: i.str, size: Math.abs(i.transform[3] ?? 0) || i.height }));
  if (lines.length === 0) return '';
  const top = Math.max(...lines.map((l) => l.size));
  // a heading stands out from the body; a page in one size has none to tell
  if (top <= Math.min(...lines.map((l) => l.size)) * 1.15) return '';
  const first = lines.findIndex((l) => l.size >= top * 0.95);
  let text = '';
  for (let i = first; i < lines.length && (lines[i] as { size: number }).size >= top * 0.95; i++)
    text += `${(lines[i] as { str: string }).str} `;
  return capTitle(text.replace(/\s+/g, ' ').trim());
}

interface PdfTextItem {
  str: string;
  transform: number[];
  height: number;
}

interface PdfPage {
  getTextContent(): Promise<{ items: Array<PdfTextItem | object> }>;
  cleanup(): void;
}

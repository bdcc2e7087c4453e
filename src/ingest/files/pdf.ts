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
    const title = typeof info.Title === 'string' ? info.Title.trim() : '';
    return { ...(title ? { title } : {}), text, sections: [], pages };
  } finally {
    await doc.destroy();
  }
}

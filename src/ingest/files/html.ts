import { Parser } from 'htmlparser2';
import type { ExtractedText } from './markdown.js';

/** Elements whose text is not prose a reader sees. */
const HIDDEN = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head', 'iframe', 'object', 'canvas']);
/** Elements that end a line of text (a paragraph break after the block-level ones). */
const BLOCK = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'header',
  'footer',
  'aside',
  'nav',
  'blockquote',
  'pre',
  'ul',
  'ol',
  'dl',
  'table',
  'figure',
  'figcaption',
  'form',
  'fieldset',
  'details',
  'summary',
  'address',
]);
const LINE = new Set(['br', 'li', 'dt', 'dd', 'tr', 'hr', 'caption']);
const CELL = new Set(['td', 'th']);
const HEADING = /^h([1-6])$/;

/**
 * HTML as the text a reader sees: scripts, styles and the head's other
 * contents dropped, block elements ending paragraphs, headings starting
 * sections, whitespace collapsed as a browser does outside `<pre>`. The title
 * is `<title>`, else the first `<h1>`.
 */
export function extractHtml(source: string): ExtractedText {
  const out: string[] = [];
  let len = 0;
  const sections: number[] = [];
  let hidden = 0;
  let pre = 0;
  let titleText: string | undefined;
  let inTitle = false;
  let heading: { level: number; start: number } | undefined;
  let h1: string | undefined;
  const text = (): string => out.join('');
  // newlines at the end of the text so far
  let newlines = 0;
  const breakLine = (n: 1 | 2): void => {
    // never more than one blank line, and none at the start
    if (len === 0) return;
    for (let i = newlines; i < n; i++) emit('\n');
  };
  const emit = (s: string): void => {
    if (s === '') return;
    // a space is not repeated, nor put at a line's start
    const prev = out.length > 0 ? (out[out.length - 1] as string) : '\n';
    if (s === ' ' && (prev.endsWith(' ') || prev.endsWith('\n'))) return;
    if (s.startsWith('\n') && prev.endsWith(' ')) {
      out[out.length - 1] = prev.slice(0, -1);
      len--;
    }
    out.push(s);
    len += s.length;
    const trail = /\n*$/.exec(s)?.[0].length ?? 0;
    newlines = trail === s.length ? newlines + trail : trail;
  };
  const parser = new Parser(
    {
      onopentag(name) {
        if (name === 'title') inTitle = true;
        if (HIDDEN.has(name)) hidden++;
        if (hidden > 0) return;
        if (name === 'pre') pre++;
        const h = HEADING.exec(name);
        if (h) {
          breakLine(2);
          heading = { level: Number(h[1]), start: len };
          sections.push(len);
        } else if (BLOCK.has(name)) breakLine(2);
        else if (LINE.has(name)) breakLine(1);
        else if (CELL.has(name)) emit(' ');
      },
      ontext(data) {
        if (inTitle) titleText = (titleText ?? '') + data;
        if (hidden > 0) return;
        if (pre > 0) {
          emit(data);
          return;
        }
        const words = data.split(/\s+/);
        words.forEach((w, i) => {
          if (i > 0) emit(' ');
          emit(w);
        });
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        if (HIDDEN.has(name)) {
          hidden = Math.max(0, hidden - 1);
          return;
        }
        if (hidden > 0) return;
        if (name === 'pre') pre = Math.max(0, pre - 1);
        if (heading && HEADING.test(name)) {
          if (heading.level === 1 && h1 === undefined) h1 = text().slice(heading.start).trim();
          heading = undefined;
          breakLine(2);
        } else if (BLOCK.has(name)) breakLine(2);
        else if (LINE.has(name)) breakLine(1);
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(source);
  parser.end();
  const body = text().replace(/\s+$/, '');
  const title = (titleText ?? '').replace(/\s+/g, ' ').trim() || h1;
  return { ...(title ? { title } : {}), text: body, sections: sections.filter((s) => s < body.length) };
}

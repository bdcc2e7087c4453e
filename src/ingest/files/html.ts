import { Parser } from 'htmlparser2';
import { capTitle, MAX_TITLE_CHARS } from '../title.js';
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
 * Elements open at once, at most: real pages nest a few dozen deep. htmlparser2 keeps its open
 * elements in an array it shifts and unshifts at the front, so each level costs the depth:
 * 200,000 nested `<div>` took 40 s. A file past it is skipped and named.
 */
export const MAX_HTML_DEPTH = 1000;

/** An HTML file that cannot be read within the bounds above. */
export class HtmlTooDeep extends Error {}

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
  let depth = 0;
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
    const trail = trailingNewlines(s);
    newlines = trail === s.length ? newlines + trail : trail;
  };
  const parser = new Parser(
    {
      onopentag(name) {
        if (++depth > MAX_HTML_DEPTH)
          throw new HtmlTooDeep(`nests elements more than ${MAX_HTML_DEPTH} deep: not a page a reader sees`);
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
        // an unclosed <title> runs to the end of the file: keep what a title can use
        if (inTitle && (titleText?.length ?? 0) < MAX_TITLE_CHARS * 4) titleText = (titleText ?? '') + data;
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
        depth = Math.max(0, depth - 1);
        if (name === 'title') inTitle = false;
        if (HIDDEN.has(name)) {
          hidden = Math.max(0, hidden - 1);
          return;
        }
        if (hidden > 0) return;
        if (name === 'pre') pre = Math.max(0, pre - 1);
        if (heading && HEADING.test(name)) {
          if (heading.level === 1 && h1 === undefined) h1 = capTitle(text().slice(heading.start).trim());
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
  const body = text().trimEnd();
  const title = capTitle((titleText ?? '').replace(/\s+/g, ' ').trim()) || h1;
  return { ...(title ? { title } : {}), text: body, sections: sections.filter((s) => s < body.length) };
}

/** How many newlines `s` ends with (a `\n*$` regex rescans each run of newlines from every start). */
function trailingNewlines(s: string): number {
  let n = 0;
  while (n < s.length && s.charCodeAt(s.length - 1 - n) === 10) n++;
  return n;
}

import { capTitle } from '../title.js';

/** A document's text as a folder reader extracts it, with where its structure breaks. */
export interface ExtractedText {
  /** From the document itself (a heading, `<title>`, front matter, PDF info); undefined: use the file name. */
  title?: string;
  text: string;
  /** UTF-16 offsets in `text` where a heading starts: the chunker breaks there first. */
  sections: number[];
  /** PDF: offset in `text` where page i + 1 starts. */
  pages?: number[];
}

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)\r?\n/;
/** An ATX heading's opening: its text is the rest of the line, less a closing run of `#` (stripped by hand). */
const ATX = /^ {0,3}(#{1,6})(?:[ \t]|$)/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * Markdown as text the model reads: headings become plain lines that start
 * a section, links and images keep their words (not their URLs), emphasis
 * marks and HTML comments go, code blocks stay as they are. The title is
 * front matter's `title:`, else the first level-1 heading, else the first
 * heading of any level.
 */
export function extractMarkdown(source: string): ExtractedText {
  let body = source.replace(/^\uFEFF/, '');
  let title: string | undefined;
  const fm = FRONT_MATTER.exec(body);
  if (fm) {
    const t = /^title:(.*)$/m.exec(fm[1] as string);
    const value = t ? (t[1] as string).trim() : '';
    if (value !== '') title = unquote(value);
    body = body.slice(fm[0].length);
  }
  body = withoutComments(body);
  const lines = body.split(/\r?\n/);
  const out: string[] = [];
  const sections: number[] = [];
  let at = 0;
  let fence: string | undefined;
  let firstHeading: { level: number; text: string } | undefined;
  let h1: string | undefined;
  const push = (line: string, heading?: { level: number; text: string }): void => {
    if (heading) {
      sections.push(at);
      if (heading.level === 1 && h1 === undefined) h1 = heading.text;
      firstHeading ??= heading;
    }
    out.push(line);
    at += line.length + 1;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const f = FENCE.exec(line);
    if (fence !== undefined) {
      if (f && (f[1] as string)[0] === fence[0] && (f[1] as string).length >= fence.length) fence = undefined;
      else push(line);
      continue;
    }
    if (f) {
      fence = f[1] as string;
      continue;
    }
    const atx = ATX.exec(line);
    const next = lines[i + 1];
    if (atx) {
      const text = inline(headingText(line.slice(atx[0].length)));
      push(text, { level: (atx[1] as string).length, text });
    } else if (next !== undefined && line.trim() !== '' && SETEXT.test(next) && !/^\s*[-*+]\s/.test(line)) {
      const text = inline(line.trim());
      push(text, { level: next.trim()[0] === '=' ? 1 : 2, text });
      i++;
    } else push(inline(line));
  }
  const text = out.join('\n').trimEnd();
  title ??= h1 ?? firstHeading?.text;
  if (title !== undefined) title = capTitle(title);
  return { ...(title ? { title } : {}), text, sections: sections.filter((s) => s < text.length) };
}

/**
 * Inline Markdown to its words: images and links keep their text, emphasis and code marks go.
 * Every pattern bounds what it scans from one start (a span, a link's text or its URL), so a line
 * is read in time linear in its length: `(.+?)` between emphasis marks made `'**a ' × 32,000`
 * quadratic (29.7 s for 128 KB). A span longer than the bound keeps its marks.
 */
function inline(s: string): string {
  return s
    .replace(/!\[([^\]]{0,300})\]\([^)]{0,2000}\)/g, '$1')
    .replace(/\[([^\]]{1,300})\]\([^)]{0,2000}\)/g, '$1')
    .replace(/\[([^\]]{1,300})\]\[[^\]]{0,300}\]/g, '$1')
    .replace(/<(https?:[^>\s]{1,2000})>/g, '$1')
    .replace(/(\*\*|__)(?=\S)(.{1,300}?)(?<=\S)\1/g, '$2')
    .replace(/(^|[^\w*])[*_](?=\S)(.{1,300}?)(?<=\S)[*_](?![\w*])/g, '$1$2')
    .replace(/`([^`]{1,2000})`/g, '$1')
    .replace(/^ {0,3}>[ \t]?/, '');
}

/** An ATX heading's text: less its closing sequence of `#` and the blanks around it. */
function headingText(rest: string): string {
  let end = rest.length;
  while (end > 0 && ' \t#'.includes(rest[end - 1] as string)) end--;
  let start = 0;
  while (start < end && ' \t'.includes(rest[start] as string)) start++;
  return rest.slice(start, end);
}

/** The text without its HTML comments, found by indexOf (a lazy regex rescanned to the end from each unclosed `<!--`). */
function withoutComments(s: string): string {
  let at = s.indexOf('<!--');
  if (at < 0) return s;
  const parts: string[] = [];
  let from = 0;
  while (at >= 0) {
    const end = s.indexOf('-->', at + 4);
    if (end < 0) break; // an unclosed comment is left as text, as the regex left it
    parts.push(s.slice(from, at));
    from = end + 3;
    at = s.indexOf('<!--', from);
  }
  parts.push(s.slice(from));
  return parts.join('');
}

function unquote(s: string): string {
  const m = /^(["'])(.*)\1$/.exec(s);
  return m ? (m[2] as string) : s;
}

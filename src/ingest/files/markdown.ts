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
const ATX = /^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$/;
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
    const t = /^title:[ \t]*(.+?)[ \t]*$/m.exec(fm[1] as string);
    if (t) title = unquote(t[1] as string);
    body = body.slice(fm[0].length);
  }
  body = body.replace(/<!--[\s\S]*?-->/g, '');
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
      const text = inline(atx[2] as string);
      push(text, { level: (atx[1] as string).length, text });
    } else if (next !== undefined && line.trim() !== '' && SETEXT.test(next) && !/^\s*[-*+]\s/.test(line)) {
      const text = inline(line.trim());
      push(text, { level: next.trim()[0] === '=' ? 1 : 2, text });
      i++;
    } else push(inline(line));
  }
  const text = out.join('\n').replace(/\s+$/, '');
  title ??= h1 ?? firstHeading?.text;
  return { ...(title ? { title } : {}), text, sections: sections.filter((s) => s < text.length) };
}

/** Inline Markdown to its words: images and links keep their text, emphasis and code marks go. */
function inline(s: string): string {
  return s
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
    .replace(/<(https?:[^>\s]+)>/g, '$1')
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, '$2')
    .replace(/(^|[^\w*])[*_](?=\S)(.+?)(?<=\S)[*_](?![\w*])/g, '$1$2')
    .replace(/`([^`]+)`/g, '$1')
    .replace(/^ {0,3}>[ \t]?/, '');
}

function unquote(s: string): string {
  const m = /^(["'])(.*)\1$/.exec(s);
  return m ? (m[2] as string) : s;
}

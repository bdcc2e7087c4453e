/**
 * The most characters of a document's title kept (a few hundred: the longest real titles, a
 * paper's or a law's, fit). The title is repeated in every chunk of its document and in every hit,
 * so a 240 KB first heading once gave a 1.4 MB file 1,311 chunks, 52.75M tokens and a 290 MiB index.
 */
export const MAX_TITLE_CHARS = 300;

/**
 * `title` as chunks repeat it: one line (a line break would end the `"Title"\n` line early), at
 * most MAX_TITLE_CHARS, cut at a word boundary with "…". A short one-line title is unchanged.
 */
export function capTitle(title: string): string {
  if (title.length <= MAX_TITLE_CHARS && !/[\r\n]/.test(title)) return title;
  // cut before collapsing: the collapse is linear, but need not walk 240 KB to keep 300 characters
  const head = title.slice(0, MAX_TITLE_CHARS * 4);
  const t = head.replace(/\s+/g, ' ').trim();
  if (t.length <= MAX_TITLE_CHARS) return head.length < title.length ? `${t}…` : t;
  const cut = t.slice(0, MAX_TITLE_CHARS);
  const space = cut.lastIndexOf(' ');
  return `${(space > MAX_TITLE_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

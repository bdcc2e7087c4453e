/**
 * `"Title"\nbody` → title without quotes; a contents without a newline has no title.
 * A module of its own: what reads a stored chunk's title (dense-text.ts, served) does not load
 * the corpus readers and their HTML and PDF parsers.
 */
export function splitTitleLine(contents: string): { title: string; bodyStart: number } {
  const nl = contents.indexOf('\n');
  if (nl < 0) return { title: '', bodyStart: 0 };
  let title = contents.slice(0, nl).trim();
  if (title.length >= 2 && title.startsWith('"') && title.endsWith('"')) title = title.slice(1, -1);
  return { title, bodyStart: nl + 1 };
}

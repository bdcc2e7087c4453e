import { RetrieverError } from '../../errors.js';

/**
 * One predicate for a list of globs over `/`-separated relative paths:
 * `**` any number of folders, `*` and `?` within one name, `{a,b}` either.
 * A glob without a `/` matches a name at any depth (`*.pdf`, `drafts`), as
 * in .gitignore; a folder that matches covers everything under it.
 */
export function globMatcher(globs: string[]): (rel: string) => boolean {
  const res = globs.map(globRegExp);
  return (rel) => {
    const parts = rel.split('/');
    // the path itself or any folder above it
    for (let n = parts.length; n > 0; n--) {
      const prefix = parts.slice(0, n).join('/');
      if (res.some((re) => re.test(prefix))) return true;
    }
    return false;
  };
}

export function globRegExp(glob: string): RegExp {
  if (glob === '' || glob.length > 1024) {
    throw new RetrieverError('BAD_INPUT', `glob ${JSON.stringify(glob.slice(0, 60))} is empty or too long`);
  }
  let g = glob.replace(/^\.\//, '');
  if (g.endsWith('/')) g = g.slice(0, -1);
  const anchored = g.includes('/');
  let re = '';
  let braces = 0;
  for (let i = 0; i < g.length; i++) {
    const c = g[i] as string;
    if (c === '*' && g[i + 1] === '*') {
      const slash = g[i + 2] === '/';
      re += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '{') {
      braces++;
      re += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      re += ')';
    } else if (c === ',' && braces > 0) re += '|';
    else re += c.replace(/[.+^$()|[\]\\{}]/g, '\\$&');
  }
  if (braces > 0) {
    throw new RetrieverError('BAD_INPUT', `glob ${JSON.stringify(glob)} opens a "{" it does not close`);
  }
  return new RegExp(anchored ? `^${re}$` : `(?:^|/)${re}$`);
}

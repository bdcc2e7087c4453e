import { describeValue, RetrieverError } from '../errors.js';

/** File names inside one corpus index directory. */
export const INDEX_FILES = {
  manifest: 'manifest.json',
  store: 'chunks.sqlite',
  postings: 'bm25.postings',
  norms: 'bm25.norms',
  blocks: 'bm25.blocks',
  vectors: 'vectors.bin',
  ann: 'dense.usearch',
  ivf: 'dense.ivf',
} as const;

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Corpus names become directory names: no separators, no dot-dot, no surprises. */
/** A folder's name made a corpus name: other characters become '-', at most 64, 'notes' when nothing is left. */
export function folderCorpusName(path: string): string {
  const base =
    path
      .replace(/[\\/]+$/, '')
      .split(/[\\/]/)
      .pop() ?? '';
  const name = base
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/\.\.+/g, '.')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64)
    .replace(/[-.]+$/, '');
  return NAME_RE.test(name) ? name : 'notes';
}

export function validateCorpusName(name: string): string {
  if (!NAME_RE.test(name) || name.includes('..')) {
    throw new RetrieverError(
      'BAD_INPUT',
      `invalid corpus name ${describeValue(name)}: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`,
    );
  }
  return name;
}

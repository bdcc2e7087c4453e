/** Our dense arm against faiss-cpu from PyPI on the same vectors (bench/suites/faiss-cpu.ts): its rows as they are. */
import { type Results, rows, runLine, table } from './lib.js';

export function renderFaissCpu(results: Results): string {
  const r = results['faiss-cpu'];
  if (!r) return '_No results yet: run `npm run bench -- faiss-cpu` (see its header)._';
  // build time, index size and memory belong to an index, not a setting: shown on its first row only
  let last = '';
  const list = rows(r).map((row) => {
    const key = `${String(row['size'])}/${String(row['engine'])}`;
    const first = key !== last;
    last = key;
    return first ? row : { ...row, 'build s': '″', 'index MiB': '″', 'RSS MiB': '″' };
  });
  return [table(list), '', `${String(r['faiss'])}; ${runLine('faiss-cpu', r)}.`].join('\n');
}

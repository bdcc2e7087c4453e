/** Our dense arm against faiss-cpu from PyPI on the same vectors (bench/suites/faiss-cpu.ts): its rows as they are. */
import { type Results, rows, runLine, table } from './lib.js';

export function renderFaissCpu(results: Results): string {
  const r = results['faiss-cpu'];
  if (!r) return '_No results yet: run `npm run bench -- faiss-cpu` (see its header)._';
  // build time, index size and memory belong to an index, not a setting: shown on its first row only
  let last = '';
  // the settings that tell the story (every setting is in the JSON): ours at the defaults' ends,
  // faiss HNSW at its default and widest, IVF-PQ at its default and first full-recall settings
  const shown = /^(efSearch (64|128|768)|efSearch 16|efSearch 512|nprobe 1,|nprobe 16,|nprobe 64,)/;
  const list = rows(r)
    .filter((row) => shown.test(String(row['setting'])))
    .map((row) => {
      const key = `${String(row['size'])}/${String(row['engine'])}`;
      const first = key !== last;
      last = key;
      return first ? row : { ...row, 'build s': '″', 'index MiB': '″', 'RSS MiB': '″' };
    });
  return [
    table(list),
    '',
    `${String(r['faiss'])}; ${list.length} of ${rows(r).length} settings shown, all in the JSON; ${runLine('faiss-cpu', r)}.`,
  ].join('\n');
}

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeLongPassages } from '../../test/helpers/long-passages.js';
import { BENCH_DATA, ROOT } from './common.js';

export { makeQueries } from '../../test/helpers/long-passages.js';

/**
 * A BM25-only index of `count` 500-word passages under bench/data (built
 * once, reused): the corpus the outside probe crashed the result cache with.
 */
export function ensureLongIndex(count: number): { indexDir: string; name: string } {
  const name = `long${count}`;
  const indexDir = join(BENCH_DATA, 'long-indexes');
  if (existsSync(join(indexDir, name, 'manifest.json'))) return { indexDir, name };
  mkdirSync(BENCH_DATA, { recursive: true });
  const input = join(BENCH_DATA, `${name}.jsonl`);
  writeFileSync(
    input,
    `${makeLongPassages(count)
      .map((p) => JSON.stringify(p))
      .join('\n')}\n`,
  );
  const bin = join(ROOT, 'bin/build-index.js');
  const args = ['--name', name, '--input', input, '--format', 'wiki18', '--index-dir', indexDir, '--no-dense'];
  const r = spawnSync(process.execPath, [bin, ...args, '--no-progress'], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`building ${name} failed`);
  return { indexDir, name };
}

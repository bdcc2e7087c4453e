/**
 * BM25 at scale: builds generated wiki-18-style corpora (see gen-corpus.ts) of
 * several sizes with the real build-index CLI, then measures serving in a
 * fresh process: start time, resident memory, and single-query latency over
 * 6,828 real questions (top-100, as the hybrid arm asks). Prints a table and
 * writes bench/results/bm25-scale.json.
 *
 *   npm run build && node dist/bench/bm25-scale.js --sizes 100000,500000,2000000
 */
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { arg, BENCH_DATA, printTable, ROOT, sizeLabel, writeResult } from './lib/common.js';
import { ensureGenCorpus, buildWiki18Index, runProbe } from './lib/child.js';

const sizes = (arg('sizes', '100000,500000,2000000') as string).split(',').map(Number);
const indexDir = arg('index-dir', join(BENCH_DATA, 'indexes')) as string;
const rows: Array<Record<string, string | number>> = [];

for (const n of sizes) {
  const input = ensureGenCorpus(n);
  const name = `gen-${sizeLabel(n)}`;
  rmSync(join(indexDir, name), { force: true });
  const b = buildWiki18Index(name, input, indexDir, [
    '--no-dense', // text + BM25 only: the path this benchmark measures
    '--no-progress',
  ]);
  const dir = join(indexDir, name);
  const size = (f: string): number => statSync(join(dir, f)).size / 2 ** 20;
  const probe = runProbe(join(ROOT, 'dist/bench/bm25-probe.js'), ['--index-dir', indexDir, '--name', name]);
  rows.push({
    passages: n,
    'build s': b.wallS,
    'build chunks/s': Math.round(n / b.wallS),
    'build peak RSS MiB': Math.round(b.maxRssMiB ?? 0),
    'sqlite MiB': Math.round(size('chunks.sqlite')),
    'bm25 MiB': Math.round(size('bm25.postings') + size('bm25.norms')),
    'open ms': Math.round(probe['openMs'] as number),
    'RSS after open MiB': Math.round(probe['rssAfterOpenMiB'] as number),
    'RSS serving MiB': Math.round(probe['rssAfterMiB'] as number),
    'p50 ms': probe['p50'] as number,
    'p99 ms': probe['p99'] as number,
    QPS: Math.round(probe['qps'] as number),
  });
  process.stderr.write(`${JSON.stringify(rows[rows.length - 1])}\n`);
}
printTable('BM25 build and single-query latency (top-100, real questions), one process per row', rows);
writeResult('bm25-scale', { sizes, rows });

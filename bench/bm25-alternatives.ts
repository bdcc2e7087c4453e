/**
 * The BM25 engine decision: minisearch (the design card's pick, all in the JS
 * heap) vs SQLite FTS5 (bm25() ranking) vs our on-disk postings, on the same
 * generated passages with the same analyzer, each in its own process.
 *
 *   npm run build && node dist/bench/bm25-alternatives.js --sizes 100000,500000 --queries 500
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { arg, BENCH_DATA, printTable, ROOT, writeResult } from './lib/common.js';
import { runProbe } from './lib/child.js';

const sizes = (arg('sizes', '100000,500000') as string).split(',').map(Number);
const input = arg('input', join(BENCH_DATA, 'gen-500k.jsonl')) as string;
const work = join(BENCH_DATA, 'alt');
// the slowest engine needs minutes per thousand queries at 500k passages
const queries = arg('queries', '500') as string;
mkdirSync(work, { recursive: true });
const rows: Array<Record<string, string | number>> = [];
for (const n of sizes) {
  for (const engine of ['ours', 'fts5', 'minisearch']) {
    const r = runProbe(
      join(ROOT, 'dist/bench/bm25-alt-probe.js'),
      ['--engine', engine, '--input', input, '--n', String(n), '--work', work, '--queries', queries],
      {
        NODE_OPTIONS: '--expose-gc --max-old-space-size=16384',
      },
    );
    rows.push({
      engine,
      passages: n,
      'build s': r['buildS'] as number,
      'index MiB': Math.round(r['indexMiB'] as number),
      'peak RSS MiB': Math.round(r.maxRssMiB ?? 0),
      'p50 ms': r['p50'] as number,
      'p99 ms': r['p99'] as number,
    });
    process.stderr.write(`${JSON.stringify(rows[rows.length - 1])}\n`);
  }
}
printTable(`BM25 engines, same passages and analyzer (top-100 per query, ${queries} real questions)`, rows);
writeResult('bm25-alternatives', { input, rows });

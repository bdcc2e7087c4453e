/** One query's path against Python's encoder alone (bench/suites/query-path.ts): its four tables. */
import { compactTable, type Results, rows, runLine } from './lib.js';

export function renderQueryPath(results: Results): string {
  const r = results['query-path'];
  if (!r) return '_No results yet: run `npm run bench -- query-path` (see its header)._';
  return [
    'Latency, one client on one kept-alive connection (node:http; targets: p50 ≤ 1.0× and p99 ≤ 1.2× the Python encoder alone):',
    '',
    compactTable(rows(r, 'latency')),
    '',
    'Where a request spends its time (server means from `retriever_stage_seconds`; the rest is what the client sees beyond them):',
    '',
    compactTable(rows(r, 'breakdown')),
    '',
    'Resident memory at ready against a Python process holding the model after one query (target ≤ 1.2×); "anonymous" leaves out the pages of mapped files (executables, libraries), of which Node\'s own executable is the largest part of the difference:',
    '',
    compactTable(rows(r, 'memory')),
    '',
    'Build throughput of our encoder:',
    '',
    compactTable(rows(r, 'build')),
    '',
    `${runLine('query-path', r)}. Where the time and the memory go, and what was tried: [lab notes](docs/lab-notes/2026-11-28-query-path-memory-ort.md).`,
  ].join('\n');
}

/** The default model sized (bench/suites/encoder.ts): its tables in BENCHMARKS.md and its cost in the guide. */
import { compactTable, fmt, type Results, rows, runLine } from './lib.js';

export function renderEncoder(results: Results): string {
  const r = results['encoder'];
  if (!r) return '_No results yet: run `npm run bench -- encoder` (see its header)._';
  return [
    `${fmt(r['passages'])} wiki-18-shaped passages (${fmt(r['passage tokens (mean)'])} tokens on average), ${fmt(r['chunks'])} chunks of ${fmt(r['chunk tokens (mean)'])} tokens, ${fmt(r['queries'])} questions of ${fmt(r['query tokens (mean)'])} tokens one at a time, then 256 at once; ${fmt(r['threads'])} threads each.`,
    '',
    compactTable(rows(r)),
    '',
    'Ratios (above 1 is ours faster for throughput; below 1 is ours faster for latency):',
    '',
    compactTable(rows(r, 'ratios')),
    '',
    'Ours, int8 against fp32:',
    '',
    compactTable(rows(r, 'int8 gain')),
    '',
    `${runLine('encoder', r)}.`,
  ].join('\n');
}

/** docs/guide.md's cost of encoding with the default model on the machine that measured it. */
export function renderEncoderCost(results: Results): string {
  const r = results['encoder'];
  if (!r) return '_Not measured yet: `npm run bench -- encoder`._';
  const m = r.machine;
  const where = m ? `${m.cpus} × ${m.cpu}` : 'the development machine';
  return [
    `Encoding with a model of e5-base-v2's shape on ${where}, our encoder, ${fmt(r['threads'])} threads ([how it was measured](benchmarks.md#the-default-model-sized-e5-base-v2s-shape-against-python)):`,
    '',
    compactTable(rows(r, 'cost')),
  ].join('\n');
}

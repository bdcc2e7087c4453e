/** One query's path against Python's encoder alone (bench/suites/query-path.ts): its four tables, and where its targets stand. */
import { compactTable, fmt, type Result, type Results, type Row, rows, runLine } from './lib.js';

const num = (row: Row | undefined, col: string): number => Number(row?.[col]);
const model = (row: Row): string => String(row['run']).split(',')[0] ?? '';
const verdict = (ratio: number, target: number, atMost = true): string =>
  Number.isFinite(ratio) ? ((atMost ? ratio <= target : ratio >= target) ? 'met' : 'missed') : 'not measured';

/** Each target of the path one request takes, from this run's own figures, with why a missed one is missed. */
function targets(r: Result): string[] {
  const lat = rows(r, 'latency');
  const mem = rows(r, 'memory');
  const build = rows(r, 'build');
  const each = (list: Row[], col: string): string => list.map((x) => `${model(x)} ${fmt(num(x, col))}×`).join(', ');
  const worst = (list: Row[], col: string): number => Math.max(...list.map((x) => num(x, col)));
  const fp32 = build.find((x) => !model(x).endsWith('-int8'));
  const int8 = build.find((x) => model(x).endsWith('-int8'));
  const int8Gain = num(int8, 'passages/s at batch 32') / num(fp32, 'passages/s at batch 32');
  return [
    'Where the targets stand in this run:',
    '',
    `- **One client, p50 ≤ 1.0× the Python encoder alone**: ${each(lat, 'p50 ours ÷ python')}: ${verdict(worst(lat, 'p50 ours ÷ python'), 1)}. ` +
      'Our session run takes what Python’s whole encode does (the breakdown’s run against Python’s mean); around it the server pays the encoder thread’s hop, the dense search, reading the hits, the answer’s write and loopback HTTP, which an encoder alone does not. ' +
      'ONNX Runtime releases, spinning settings and graph fusions were measured against it ([lab notes](docs/lab-notes/2026-11-28-query-path-memory-ort.md)).',
    `- **One client, p99 ≤ 1.2×**: ${each(lat, 'p99 ours ÷ python')}: ${verdict(worst(lat, 'p99 ours ÷ python'), 1.2)}.`,
    `- **Memory at ready ≤ 1.2× the Python process**: ${each(mem, 'ours ÷ python')}: ${mem.map((x) => `${model(x)} ${verdict(num(x, 'ours ÷ python'), 1.2)}`).join(', ')}; without mapped files ${each(mem, 'anonymous ours ÷ python')}. ` +
      'What a Node process holds beyond Python’s is fixed (its executable’s resident pages, two isolates, the MCP SDK), so it weighs more beside a small int8 model.',
    `- **int8 builds at ≥ 3× fp32**: ${fmt(int8Gain)}× here (${build.map((x) => `${model(x)} ${fmt(num(x, 'passages/s at batch 32'))}`).join(' against ')} passages a second): ${verdict(int8Gain, 3, false)}. ` +
      'The published int8 graphs quantize every activation per run and keep attention, GELU and LayerNorm in fp32; onnxruntime-Python gets about the same ratio from the same files (the default model’s shape: [below](#the-default-model-sized-e5-base-v2s-shape-against-python)). int8 is therefore not the default ([quality](#quality-with-real-models)).',
  ];
}

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
    ...targets(r),
    '',
    `${runLine('query-path', r)}. Where the time and the memory go, and what was tried: [lab notes](docs/lab-notes/2026-11-28-query-path-memory-ort.md).`,
  ].join('\n');
}

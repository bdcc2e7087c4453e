/**
 * Load: `connections` concurrent clients (wrk) for `seconds` against hybrid
 * search on a 100k-chunk index with a BERT-base-shaped encoder (random
 * weights, e5-base FLOPs), micro-batching on and off, result cache off so
 * every request does real work. Reports QPS, p50/p99 and errors.
 *
 *   npm run build && node dist/bench/load.js [--connections 256 --seconds 60]
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { arg, BENCH_DATA, printTable, ROOT, writeResult } from './lib/common.js';
import { runBuildIndex, runCommand } from './lib/child.js';
import { loadRealQuestions } from './lib/queries.js';
import { ensureVectors } from './lib/vectors.js';
import { startServer } from './lib/server.js';
import { runWrk } from './lib/wrk.js';

const connections = Number(arg('connections', '256'));
const seconds = Number(arg('seconds', '60'));
const model = arg('model', join(BENCH_DATA, 'bert-base-random')) as string;
const indexDir = join(BENCH_DATA, 'load-indexes');

export function ensureLoadIndex(): void {
  if (existsSync(join(indexDir, 'load100k', 'manifest.json'))) return;
  const corpus = join(BENCH_DATA, 'gen-100k.jsonl');
  if (!existsSync(corpus))
    runCommand(process.execPath, [join(ROOT, 'dist/bench/gen-corpus.js'), '--passages', '100000', '--out', corpus]);
  const vectors = join(BENCH_DATA, 'vec-clustered-100k-768.fbin');
  ensureVectors(vectors, 'clustered', 100_000, 768, 11, true);
  runBuildIndex([
    '--name',
    'load100k',
    '--input',
    corpus,
    '--format',
    'wiki18',
    '--index-dir',
    indexDir,
    '--model-path',
    model,
    '--vectors',
    vectors,
    '--no-progress',
  ]);
}

ensureLoadIndex();
const queries = loadRealQuestions();
const rows: Array<Record<string, string | number>> = [];
for (const batching of ['on', 'off']) {
  const srv = await startServer([
    '--corpus',
    'load100k',
    '--index-dir',
    indexDir,
    '--model-path',
    model,
    '--cache-size',
    '0',
    '--batch-max',
    batching === 'on' ? '64' : '1',
    '--max-inflight',
    '4096',
    '--encoder-queue',
    '100000',
    '--deadline-ms',
    '120000',
  ]);
  try {
    const w = runWrk(
      srv.url,
      '/retrieve',
      queries,
      '{"queries":[QUERY],"topk":3,"mode":"hybrid"}',
      connections,
      seconds,
    );
    const metrics = await (await fetch(`${srv.url}/metrics`)).text();
    const sum = Number(/retriever_encoder_batch_size_sum ([\d.e+]+)/.exec(metrics)?.[1]);
    const count = Number(/retriever_encoder_batch_size_count (\d+)/.exec(metrics)?.[1]);
    rows.push({
      batching,
      connections,
      seconds,
      requests: w.requests,
      QPS: w.rps,
      'p50 ms': w.p50ms,
      'p90 ms': w.p90ms,
      'p99 ms': w.p99ms,
      errors: w.non2xx + w.socketErrors,
      'mean encoder batch': sum / count,
    });
    process.stderr.write(`${JSON.stringify(rows[rows.length - 1])}\n`);
  } finally {
    await srv.stop();
  }
}
const ratio = Number(rows[0]?.['QPS']) / Number(rows[1]?.['QPS']);
printTable(
  `Hybrid /retrieve, 100k chunks, BERT-base-shaped encoder on CPU, result cache off; batching on/off QPS ratio ${ratio.toFixed(2)}`,
  rows,
);
writeResult('load', { connections, seconds, rows, qpsRatio: ratio });

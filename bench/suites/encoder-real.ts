/**
 * A real retrieval encoder, ours against the Python stacks on the same ONNX
 * file, texts and thread count, in one run: e5-small-v2 fp32 and int8 from
 * Maven Central (scripts/models/real-models.ts).
 *
 *   npm run bench -- encoder-real [--models e5-small-v2,e5-small-v2-int8] [--threads 2]
 *
 * Texts: the 1,585 passages of 2WikiMultiHopQA-200 and its 200 questions,
 * with the model's prefixes. Build throughput: passages/s at batch 32 (ours:
 * the encoder the build uses, in-process). Query latency, one at a time:
 * ours end to end through `POST /retrieve` (dense, top 5, result and vector
 * caches off) at one client, with the micro-batcher's idle wait of 2 ms (the
 * old default) and 0 (the default since 2026-11-27), and our encoder alone;
 * the peers' encoder alone (bench/peers/encoder_peers.py: onnxruntime's
 * Python API, sentence-transformers' ONNX backend, fastembed). Writes
 * bench/results/encoder-real.json.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openEncoder } from '../../src/encoder/load-encoder.js';
import { silentLogger } from '../../src/util/log.js';
import {
  fetchRealModel,
  modelFetchOptions,
  onnxFileOf,
  pythonFor,
  REAL_MODELS,
  variantArgs,
} from '../../scripts/models/real-models.js';
import { arg, BENCH_DATA, printTable, ROOT, summarize, writeResult } from '../lib/common.js';
import { load2Wiki } from '../lib/queries.js';
import { startServer } from '../lib/server.js';

const threads = Number(arg('threads', '2'));
const models = (arg('models') ?? 'e5-small-v2,e5-small-v2-int8').split(',');
const log = (line: string): void => void process.stderr.write(`${line}\n`);

const { corpusFile, passages, questions } = load2Wiki();
const work = join(BENCH_DATA, 'encoder-real');
mkdirSync(work, { recursive: true });

type Row = Record<string, string | number>;
const rows: Row[] = [];

for (const model of models) {
  const dir = await fetchRealModel(model, modelFetchOptions(log));
  const variant = REAL_MODELS[model]?.variant ?? 'fp32';
  const { encoder } = await openEncoder(
    { model, modelPath: dir, variant, revision: 'main', device: 'cpu', threads, batchSize: 32 },
    { endpoint: '', cacheDir: '', offline: true, log: silentLogger, progress: false },
  );
  const s = encoder.settings;
  let build: number;
  const alone: number[] = [];
  try {
    await encoder.embedPassages(passages.slice(0, 8));
    const t0 = performance.now();
    await encoder.embedPassages(passages);
    build = passages.length / ((performance.now() - t0) / 1000);
    for (const q of questions) {
      const t = performance.now();
      await encoder.embedQueries([q]);
      alone.push(performance.now() - t);
    }
  } finally {
    await encoder.close();
  }
  const a = summarize(alone);
  rows.push(row(model, 'ours: encoder alone (in-process)', build, a.p50, a.p99));

  // end to end at one client, through /retrieve
  const indexDir = join(BENCH_DATA, 'real-indexes', model);
  if (!existsSync(join(indexDir, '2wiki', 'manifest.json'))) {
    execFileSync(
      process.execPath,
      [
        join(ROOT, 'bin/build-index.js'),
        ...['--name', '2wiki', '--input', corpusFile, '--format', 'wiki18', '--index-dir', indexDir],
        ...['--model-path', dir, ...variantArgs(model), '--no-progress'],
      ],
      { stdio: ['ignore', 2, 2] },
    );
  }
  for (const wait of [2, 0]) {
    const server = await startServer([
      ...['--corpus', '2wiki', '--index-dir', indexDir, '--model-path', dir, ...variantArgs(model)],
      ...['--encoder-threads', String(threads), '--cache-size', '0', '--vector-cache-size', '0'],
      ...['--batch-wait-ms', String(wait)],
    ]);
    const lat: number[] = [];
    try {
      for (const [i, q] of [...questions.slice(0, 10), ...questions].entries()) {
        const t = performance.now();
        const r = await fetch(`${server.url}/retrieve`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ queries: [q], topk: 5, mode: 'dense' }),
        });
        if (r.status !== 200) throw new Error(`/retrieve answered ${r.status}: ${await r.text()}`);
        await r.arrayBuffer();
        if (i >= 10) lat.push(performance.now() - t); // the first ten warm up
      }
    } finally {
      await server.stop();
    }
    const e = summarize(lat);
    rows.push(row(model, `ours: POST /retrieve at one client, --batch-wait-ms ${wait}`, undefined, e.p50, e.p99));
  }

  // the peers, on the same file and texts
  const pFile = join(work, 'passages.jsonl');
  const qFile = join(work, 'queries.jsonl');
  writeFileSync(pFile, passages.map((t) => JSON.stringify(s.passagePrefix + t)).join('\n') + '\n');
  writeFileSync(qFile, questions.map((t) => JSON.stringify(s.queryPrefix + t)).join('\n') + '\n');
  for (const engine of ['ort', 'st-onnx', 'fastembed']) {
    const out = execFileSync(
      pythonFor({ log }),
      [
        join(ROOT, 'bench/peers/encoder_peers.py'),
        ...['--engine', engine, '--model-dir', dir, '--onnx', onnxFileOf(model)],
        ...['--passages', pFile, '--queries', qFile, '--max-length', String(s.maxLength)],
        ...['--pooling', s.pooling, '--threads', String(threads)],
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 2] },
    );
    const r = JSON.parse(out.trim().split('\n').pop() as string) as Record<string, number | string>;
    const name = {
      ort: 'onnxruntime (Python)',
      'st-onnx': 'sentence-transformers, ONNX backend',
      fastembed: 'fastembed',
    }[engine] as string;
    if (typeof r['error'] === 'string') {
      log(`${engine}: ${r['error']}`);
      rows.push({ model, engine: name, error: r['error'] });
      continue;
    }
    rows.push(
      row(model, name, r['passages_per_s'] as number, r['query_p50_ms'] as number, r['query_p99_ms'] as number),
    );
  }
}

function row(model: string, engine: string, build: number | undefined, p50: number, p99: number): Row {
  return {
    model,
    engine,
    'passages/s': build === undefined ? '—' : Number(build.toFixed(1)),
    'query p50 ms': Number(p50.toFixed(2)),
    'query p99 ms': Number(p99.toFixed(2)),
  };
}

printTable('Encoder: ours against the Python stacks, same file, texts and threads', rows);
writeResult('encoder-real', { threads, passages: passages.length, queries: questions.length, rows });

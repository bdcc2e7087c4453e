/**
 * The default model, sized: an encoder of exactly e5-base-v2's shape (BERT-base:
 * 768 hidden, 12 layers, 12 heads, FFN 3072; random weights, made by
 * bench/lib/make_bert_onnx.py with its int8 file quantized as the published
 * ones are) timed against onnxruntime-Python on the same files, texts and
 * threads, fp32 and int8, in one run. Honest for speed, never for quality.
 *
 *   npm run bench -- encoder [--threads 2] [--passages 128] [--chunks 16] [--queries 100]
 *
 * For each variant, ours (our encoder in-process, as a build and a server run
 * it) and then the peer (bench/peers/encoder_peers.py --engine ort):
 * wiki-18-shaped passages a second at batch 32 (100-word Wikipedia passages
 * from ../shared/data/enwiki-1m), 500-token chunks a second (the window of
 * MultiHop-RAG and GraphRAG-Bench, cut from GraphRAG-Bench medical), one
 * query's latency (2Wiki questions, one at a time) and 256 questions handed
 * over at once. From our figures, what encoding wiki-18 and 1,000 chunks of
 * 500 tokens costs on this machine (rendered into docs/guide.md). Writes
 * bench/results/encoder.json.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openEncoder } from '../../src/encoder/load-encoder.js';
import { WordPieceTokenizer } from '../../src/encoder/wordpiece.js';
import { silentLogger } from '../../src/util/log.js';
import { pythonFor } from '../../scripts/models/real-models.js';
import {
  arg,
  BENCH_DATA,
  installedOrtVersion,
  printTable,
  ROOT,
  SHARED,
  summarize,
  writeResult,
} from '../lib/common.js';
import { loadRealQuestions } from '../lib/queries.js';

const threads = Number(arg('threads', '2'));
const nPassages = Number(arg('passages', '128'));
const nChunks = Number(arg('chunks', '16'));
const nQueries = Number(arg('queries', '100'));
const QUERY_BATCH = 256;
/** wiki-18's passage count (corpora/wiki18.json's file, Search-R1's corpus). */
const WIKI18_PASSAGES = 21_015_324;
const log = (line: string): void => void process.stderr.write(`${line}\n`);

const modelDir = join(BENCH_DATA, 'bert-base-random');
if (!existsSync(join(modelDir, 'onnx', 'model_quantized.onnx'))) {
  log(`writing the e5-base-v2-shaped random model to ${modelDir}`);
  execFileSync(
    pythonFor({ log }),
    [
      join(ROOT, 'bench/lib/make_bert_onnx.py'),
      ...['--out', modelDir, '--int8', '--tokenizer-from', join(SHARED, 'models/tiny-e5')],
    ],
    { stdio: ['ignore', 2, 2] },
  );
}

// wiki-18-shaped passages: the first of enwiki-1m's 100-word passages
const enwiki = execFileSync(
  'bash',
  ['-c', `xz -dc "${join(SHARED, 'data/enwiki-1m/passages.jsonl.xz')}" | head -n ${nPassages}`],
  { encoding: 'utf8', maxBuffer: 64 << 20 },
)
  .trim()
  .split('\n')
  .map((l) => (JSON.parse(l) as { contents: string }).contents);
// 500-token chunks: consecutive 360-word windows of GraphRAG-Bench medical (about 500 tokens each)
const medical = (
  JSON.parse(readFileSync(join(SHARED, 'data/graphrag-bench/medical.json'), 'utf8')) as { context: string }
).context.split(/\s+/);
const chunks = Array.from({ length: nChunks }, (_, i) => medical.slice(i * 360, (i + 1) * 360).join(' '));
const questions = loadRealQuestions().slice(0, Math.max(nQueries, QUERY_BATCH));

const tok = WordPieceTokenizer.fromFile(join(modelDir, 'tokenizer.json'));
const meanTokens = (texts: string[], prefix: string): number =>
  texts.reduce((s, t) => s + tok.encode(prefix + t, 512).ids.length, 0) / texts.length;

type Row = Record<string, string | number>;
const rows: Row[] = [];
const work = join(BENCH_DATA, 'encoder');
mkdirSync(work, { recursive: true });
const hub = { endpoint: '', cacheDir: '', offline: true, log: silentLogger, progress: false };

interface Figures {
  passages: number;
  chunks: number;
  p50: number;
  p99: number;
  batch: number;
}

async function ours(variant: 'fp32' | 'int8'): Promise<Figures> {
  const open = async (batchSize: number) =>
    (
      await openEncoder(
        {
          model: 'bert-base-random',
          modelPath: modelDir,
          variant,
          revision: 'main',
          device: 'cpu',
          threads,
          batchSize,
          maxLength: 512,
          pooling: 'mean',
          queryPrefix: 'query: ',
          passagePrefix: 'passage: ',
        },
        hub,
      )
    ).encoder;
  const encoder = await open(32);
  let f: Figures;
  try {
    await encoder.embedPassages(enwiki.slice(0, 4)); // warm
    let t0 = performance.now();
    await encoder.embedPassages(enwiki);
    const passages = enwiki.length / ((performance.now() - t0) / 1000);
    t0 = performance.now();
    await encoder.embedPassages(chunks);
    const chunkRate = chunks.length / ((performance.now() - t0) / 1000);
    const lat: number[] = [];
    for (const [i, q] of [...questions.slice(0, 5), ...questions.slice(0, nQueries)].entries()) {
      const t = performance.now();
      await encoder.embedQueries([q]);
      if (i >= 5) lat.push(performance.now() - t); // five warm up
    }
    const s = summarize(lat);
    f = { passages, chunks: chunkRate, p50: s.p50, p99: s.p99, batch: 0 };
  } finally {
    await encoder.close();
  }
  // 256 questions at once, as the server's micro-batcher would hand them over under load
  const wide = await open(QUERY_BATCH);
  try {
    await wide.embedQueries(questions.slice(0, 4));
    const t0 = performance.now();
    await wide.embedQueries(questions.slice(0, QUERY_BATCH));
    f.batch = QUERY_BATCH / ((performance.now() - t0) / 1000);
  } finally {
    await wide.close();
  }
  return f;
}

function python(variant: 'fp32' | 'int8'): Figures {
  const pFile = join(work, 'passages.jsonl');
  const cFile = join(work, 'chunks.jsonl');
  const qFile = join(work, 'queries.jsonl');
  writeFileSync(pFile, enwiki.map((t) => JSON.stringify(`passage: ${t}`)).join('\n') + '\n');
  writeFileSync(cFile, chunks.map((t) => JSON.stringify(`passage: ${t}`)).join('\n') + '\n');
  writeFileSync(qFile, questions.map((t) => JSON.stringify(`query: ${t}`)).join('\n') + '\n');
  const out = execFileSync(
    pythonFor({ log }),
    [
      join(ROOT, 'bench/peers/encoder_peers.py'),
      ...['--engine', 'ort', '--model-dir', modelDir],
      ...['--onnx', variant === 'int8' ? 'onnx/model_quantized.onnx' : 'onnx/model.onnx'],
      ...['--passages', pFile, '--chunks', cFile, '--queries', qFile, '--max-length', '512'],
      ...['--single-queries', String(nQueries), '--query-batch', String(QUERY_BATCH)],
      ...['--threads', String(threads), '--batch-size', '32'],
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 2], maxBuffer: 16 << 20 },
  );
  const r = JSON.parse(out.trim().split('\n').pop() as string) as Record<string, number | string>;
  if (typeof r['error'] === 'string') throw new Error(`onnxruntime-Python: ${r['error']}`);
  return {
    passages: r['passages_per_s'] as number,
    chunks: r['chunks_per_s'] as number,
    p50: r['query_p50_ms'] as number,
    p99: r['query_p99_ms'] as number,
    batch: r['query_batch_per_s'] as number,
  };
}

const peerOrt = execFileSync(pythonFor({ log }), ['-c', 'import onnxruntime; print(onnxruntime.__version__)'], {
  encoding: 'utf8',
}).trim();
const productOrt = installedOrtVersion();
const row = (variant: string, engine: string, f: Figures): Row => ({
  variant,
  engine,
  'wiki-18 passages/s': Number(f.passages.toFixed(2)),
  '500-token chunks/s': Number(f.chunks.toFixed(2)),
  'query p50 ms': Number(f.p50.toFixed(1)),
  'query p99 ms': Number(f.p99.toFixed(1)),
  [`${QUERY_BATCH} queries at once, queries/s`]: Number(f.batch.toFixed(1)),
});
const ratios: Row[] = [];
const cost: Row[] = [];
const mine = new Map<string, Figures>();
for (const variant of ['fp32', 'int8'] as const) {
  log(`${variant}: ours`);
  const o = await ours(variant);
  log(`${variant}: onnxruntime-Python`);
  const p = python(variant);
  mine.set(variant, o);
  rows.push(row(variant, `ours (onnxruntime-node ${productOrt})`, o));
  rows.push(row(variant, `onnxruntime-Python ${peerOrt}`, p));
  ratios.push({
    variant,
    'passages/s, ours ÷ python': Number((o.passages / p.passages).toFixed(2)),
    'chunks/s, ours ÷ python': Number((o.chunks / p.chunks).toFixed(2)),
    'query p50, ours ÷ python': Number((o.p50 / p.p50).toFixed(2)),
    'query p99, ours ÷ python': Number((o.p99 / p.p99).toFixed(2)),
    [`${QUERY_BATCH} at once, ours ÷ python`]: Number((o.batch / p.batch).toFixed(2)),
  });
  cost.push({
    variant,
    'wiki-18, 21,015,324 passages: days': Number((WIKI18_PASSAGES / o.passages / 86400).toFixed(1)),
    '1,000 chunks of 500 tokens: minutes': Number((1000 / o.chunks / 60).toFixed(1)),
    'one query, p50 ms': Number(o.p50.toFixed(1)),
  });
}
const fp32 = mine.get('fp32') as Figures;
const int8 = mine.get('int8') as Figures;
const int8Gain: Row[] = [
  {
    'passages/s, int8 ÷ fp32': Number((int8.passages / fp32.passages).toFixed(2)),
    'chunks/s, int8 ÷ fp32': Number((int8.chunks / fp32.chunks).toFixed(2)),
    'query p50, int8 ÷ fp32': Number((int8.p50 / fp32.p50).toFixed(2)),
    [`${QUERY_BATCH} at once, int8 ÷ fp32`]: Number((int8.batch / fp32.batch).toFixed(2)),
  },
];

printTable(`e5-base-v2-shaped encoder (random weights), ${threads} threads`, rows);
printTable('ratios', ratios);
printTable('ours, int8 against fp32', int8Gain);
printTable('cost on this machine (ours)', cost);
writeResult('encoder', {
  command: 'npm run bench -- encoder',
  model: 'e5-base-v2 shape (768 hidden, 12 layers, FFN 3072), random weights; int8 quantized per channel',
  threads,
  passages: enwiki.length,
  'passage tokens (mean)': Number(meanTokens(enwiki, 'passage: ').toFixed(1)),
  chunks: chunks.length,
  'chunk tokens (mean)': Number(meanTokens(chunks, 'passage: ').toFixed(1)),
  queries: nQueries,
  'query tokens (mean)': Number(meanTokens(questions.slice(0, nQueries), 'query: ').toFixed(1)),
  rows,
  ratios,
  'int8 gain': int8Gain,
  cost,
});

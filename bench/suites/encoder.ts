/**
 * Encoder throughput on CPU for a BERT-base-shaped ONNX graph (random
 * weights: the FLOPs of e5-base-v2, none of its knowledge; made by
 * bench/lib/make_bert_onnx.py). Query latency at batch 1, passages/s at batch
 * 1/32/128, and the achieved FLOP rate against the cores' peak. Then
 * queries/s for micro-batches of real questions (as the server's batcher
 * hands them over): one by one, one batch padded to its longest, and cut into
 * batches of similar length (the default, `planBatches`).
 *
 *   /usr/bin/python3 bench/lib/make_bert_onnx.py --out bench/data/bert-base-random
 *   npm run bench -- encoder [--model bench/data/bert-base-random] [--device cpu]
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { openEncoder } from '../../src/encoder/load-encoder.js';
import { WordPieceTokenizer } from '../../src/encoder/wordpiece.js';
import { silentLogger } from '../../src/util/log.js';
import { arg, BENCH_DATA, printTable, prng, SHARED, summarize, writeResult } from '../lib/common.js';
import { loadRealQuestions } from '../lib/queries.js';

const modelDir = arg('model', join(BENCH_DATA, 'bert-base-random')) as string;
const device = arg('device', 'cpu') as 'cpu' | 'cuda';
const hub = {
  endpoint: 'http://127.0.0.1:9',
  cacheDir: '/nonexistent',
  offline: true,
  log: silentLogger,
  progress: false,
};

// BERT-base forward FLOPs per token: 12 layers × (QKV + output projections 4·2·768² + FFN 2·2·768·3072)
// plus attention (scores and context, 2·2·768·L per layer for sequence length L).
function flopsPerToken(seqLen: number): number {
  const H = 768;
  const F = 3072;
  return 12 * (4 * 2 * H * H + 2 * 2 * H * F + 2 * 2 * H * seqLen);
}

const passages = readFileSync(join(SHARED, 'data/2wiki-200/corpus.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => (JSON.parse(l) as { contents: string }).contents);
const queries = loadRealQuestions().slice(0, 300);
const tok = WordPieceTokenizer.fromFile(join(modelDir, 'tokenizer.json'));
const tokens = (t: string): number => tok.encode(t, 512).ids.length;

const rows: Array<Record<string, string | number>> = [];
const cores = cpus().length;
// Zen 4 (and most AVX2/AVX-512 x86): 2 FMA pipes × 8 float32 lanes × 2 FLOP = 32 FLOP/cycle/core
// os.cpus() reports speed 0 in some VMs; /proc/cpuinfo still has the clock
const mhz = cpus()[0]?.speed || Number(/cpu MHz\s*:\s*([\d.]+)/.exec(cpuinfo())?.[1] ?? 0);
const peak = cores * mhz * 1e6 * 32;

const open = async (batchSize: number, maxPadding?: number) =>
  (
    await openEncoder(
      {
        model: 'bert-base-random',
        modelPath: modelDir,
        variant: 'fp32',
        revision: 'main',
        device,
        threads: 0,
        batchSize,
        maxPadding,
        maxLength: 512,
        pooling: 'mean',
        queryPrefix: 'query: ',
        passagePrefix: 'passage: ',
      },
      hub,
    )
  ).encoder;

// passages: batches padded to their longest (as this table has always measured), then the default
// cut into batches of similar length (`planBatches`), as build-index runs them
const settings: Array<[number, number | undefined]> = [
  [1, Infinity],
  [32, Infinity],
  [128, Infinity],
  [128, undefined],
];
for (const [batch, maxPadding] of settings) {
  const encoder = await open(batch, maxPadding);
  // the same passages at every batch size, handed over at once as build-index hands over a
  // window: the encoder sorts them by length and pads each batch to its own longest
  const sample = passages.slice(0, 256);
  await encoder.embedPassages(sample.slice(0, 8)); // warm
  const t0 = performance.now();
  await encoder.embedPassages(sample);
  const secs = (performance.now() - t0) / 1000;
  const toks = sample.reduce((s, p) => s + tokens(`passage: ${p}`), 0);
  const avg = toks / sample.length;
  const flops = (toks * flopsPerToken(avg)) / secs;
  const row: Record<string, string | number> = {
    device,
    batch: maxPadding === undefined ? `${batch}, similar lengths` : batch,
    'passages/s': sample.length / secs,
    'avg tokens': Math.round(avg),
    'tokens/s': Math.round(toks / secs),
    'GFLOP/s': flops / 1e9,
    '% of peak': (100 * flops) / peak,
  };
  if (batch === 1) {
    const lat: number[] = [];
    for (const q of queries.slice(0, 100)) {
      const t = performance.now();
      await encoder.embedQueries([q]);
      lat.push(performance.now() - t);
    }
    const s = summarize(lat);
    row['query p50 ms'] = s.p50;
    row['query p99 ms'] = s.p99;
  }
  rows.push(row);
  await encoder.close();
}
printTable(
  `BERT-base-shaped ONNX encoder (random weights), ${cores} cores, peak ≈ ${(peak / 1e9).toFixed(0)} GFLOP/s fp32`,
  rows,
);

// Micro-batches of real questions, drawn at random (questions run 9 to 155 tokens), the same
// batches for every way of running them; the modes alternate per round so drift hits all alike.
const BATCH = Number(arg('query-batch', '56'));
const ROUNDS = Number(arg('rounds', '6'));
const all = loadRealQuestions();
const rnd = prng(7);
const batches = Array.from({ length: ROUNDS }, () =>
  Array.from({ length: BATCH }, () => all[Math.floor(rnd() * all.length)] as string),
);
const planned = await open(64);
const padded = await open(64, Infinity);
const modes: Array<[string, (b: string[]) => Promise<unknown>]> = [
  [
    'one by one',
    async (b) => {
      for (const q of b) await planned.embedQueries([q]);
    },
  ],
  ['one batch, padded to its longest', (b) => padded.embedQueries(b)],
  ['batches of similar length (default)', (b) => planned.embedQueries(b)],
];
await planned.embedQueries(batches[0]?.slice(0, 4) ?? []); // warm
await padded.embedQueries(batches[0]?.slice(0, 4) ?? []);
const secs = new Map<string, number>();
for (const b of batches) {
  for (const [name, run] of modes) {
    const t = performance.now();
    await run(b);
    secs.set(name, (secs.get(name) ?? 0) + (performance.now() - t) / 1000);
  }
}
await planned.close();
await padded.close();
const one = (BATCH * ROUNDS) / (secs.get('one by one') as number);
const queryRows = modes.map(([name]) => {
  const qps = (BATCH * ROUNDS) / (secs.get(name) as number);
  return { device, 'micro-batch': BATCH, mode: name, 'queries/s': qps, 'vs one by one': `${(qps / one).toFixed(2)}×` };
});
printTable(`Query micro-batches of ${BATCH} real questions, ${ROUNDS} rounds`, queryRows);
writeResult(`encoder-${device}`, {
  modelDir,
  cores,
  peakGflops: peak / 1e9,
  flopsPerToken: flopsPerToken(128),
  rows,
  queryRows,
});

function cpuinfo(): string {
  try {
    return readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return '';
  }
}

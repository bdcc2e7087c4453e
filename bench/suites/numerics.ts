/**
 * The product's vectors for a real model against an independent Python
 * reference, on the same texts, and the encoders' speed in the same run.
 *
 *   npm run build:bench
 *   npm run bench -- numerics [--model all-MiniLM-L6-v2] [--threads 2]
 *
 * Texts (1,200): 800 real 2WikiMultiHopQA paragraphs, its 200 questions, and
 * 200 texts of eight consecutive paragraphs each (over 512 tokens, so
 * truncation is exercised). The references (scripts/models/reference_embed.py,
 * in bench/.venv): sentence-transformers on the model's own safetensors where
 * the model directory has them, and `tokenizers` + onnxruntime + numpy pooling
 * on the very ONNX file the product loads. Reported: cosine between the
 * product's vector and each reference's (min, p01, mean), texts per second
 * at batch 32 and single-query p50. Writes bench/results/numerics-<model>.json.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openEncoder } from '../../src/encoder/load-encoder.js';
import { silentLogger } from '../../src/util/log.js';
import { percentile } from '../../src/util/percentile.js';
import { arg, BENCH_DATA, ROOT, SHARED, writeResult } from '../lib/common.js';
import {
  fetchRealModel,
  modelFetchOptions,
  onnxFileOf,
  pythonFor,
  REAL_MODELS,
} from '../../scripts/models/real-models.js';

const threads = Number(arg('threads', '2'));
const models = arg('model') ? [arg('model') as string] : Object.keys(REAL_MODELS);
const log = (line: string): void => void process.stderr.write(`${line}\n`);

const paragraphs = readFileSync(join(SHARED, 'data/2wiki-200/corpus.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => (JSON.parse(l) as { contents: string }).contents);
const questions = readFileSync(join(SHARED, 'data/2wiki-200/queries.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => (JSON.parse(l) as { question: string }).question);
const long = Array.from({ length: 200 }, (_, i) => paragraphs.slice(i * 7, i * 7 + 8).join('\n'));
const texts = [...paragraphs.slice(0, 800), ...questions.slice(0, 200), ...long];

const work = join(BENCH_DATA, 'numerics');
mkdirSync(work, { recursive: true });
const textsFile = join(work, 'texts.jsonl');
const queriesFile = join(work, 'queries.jsonl');
writeFileSync(textsFile, texts.map((t) => JSON.stringify(t)).join('\n') + '\n');
writeFileSync(queriesFile, questions.map((t) => JSON.stringify(t)).join('\n') + '\n');

for (const model of models) {
  const dir = await fetchRealModel(model, modelFetchOptions(log));
  const { encoder } = await openEncoder(
    {
      model,
      modelPath: dir,
      variant: REAL_MODELS[model]?.variant ?? 'fp32',
      revision: 'main',
      device: 'cpu',
      threads,
      batchSize: 32,
    },
    { endpoint: '', cacheDir: '', offline: true, log: silentLogger, progress: false },
  );
  const s = encoder.settings;
  // the passage prefix is part of the text both sides embed
  const prefixed = texts.map((t) => s.passagePrefix + t);
  await encoder.embedRaw(prefixed.slice(0, 8));
  const t0 = performance.now();
  const ours = await encoder.embedRaw(prefixed);
  const ourSeconds = (performance.now() - t0) / 1000;
  const lat: number[] = [];
  for (const q of questions) {
    const t = performance.now();
    await encoder.embedQueries([q]);
    lat.push(performance.now() - t);
  }
  await encoder.close();
  writeFileSync(join(work, 'prefixed.jsonl'), prefixed.map((t) => JSON.stringify(t)).join('\n') + '\n');
  const engines = existsSync(join(dir, 'model.safetensors')) ? ['st', 'ort'] : ['ort'];
  if (engines.includes('st')) ensureSentenceTransformers();
  const refs: Record<string, unknown>[] = [];
  for (const engine of engines) {
    const out = join(work, `${model}-${engine}.f32`);
    const line = execFileSync(
      pythonFor({ log }),
      [
        join(ROOT, 'scripts/models/reference_embed.py'),
        ...['--model-dir', dir, '--onnx', onnxFileOf(model), '--engine', engine],
        ...['--texts', join(work, 'prefixed.jsonl')],
        ...['--queries', queriesFile, '--out', out, '--max-length', String(s.maxLength)],
        ...['--pooling', s.pooling, '--threads', String(threads)],
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 2] },
    );
    const timing = JSON.parse(line.trim().split('\n').pop() as string) as Record<string, unknown>;
    const raw = readFileSync(out);
    const ref = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
    const cos = ours.map((v, i) => {
      let dot = 0;
      let a = 0;
      let b = 0;
      for (let d = 0; d < v.length; d++) {
        const x = v[d] as number;
        const y = ref[i * v.length + d] as number;
        dot += x * y;
        a += x * x;
        b += y * y;
      }
      return dot / Math.sqrt(a * b);
    });
    const sorted = [...cos].sort((x, y) => x - y);
    refs.push({
      engine,
      cosine: {
        min: sorted[0],
        p01: sorted[Math.floor(sorted.length * 0.01)],
        mean: cos.reduce((x, y) => x + y, 0) / cos.length,
        longMin: Math.min(...cos.slice(1000)),
      },
      ...timing,
    });
    log(`${model} vs ${engine}: min cosine ${sorted[0]?.toFixed(6)}; ${JSON.stringify(timing)}`);
  }
  writeResult(`numerics-${model}`, {
    model,
    about: REAL_MODELS[model]!.about,
    settings: {
      maxLength: s.maxLength,
      pooling: s.pooling,
      queryPrefix: s.queryPrefix,
      passagePrefix: s.passagePrefix,
    },
    threads,
    texts: { total: texts.length, paragraphs: 800, questions: 200, longOver512Tokens: 200 },
    ours: {
      texts_per_s: texts.length / ourSeconds,
      seconds: ourSeconds,
      query_p50_ms: percentile(
        [...lat].sort((x, y) => x - y),
        50,
      ),
    },
    references: refs,
  });
}

/** sentence-transformers (and torch, a large download) in bench/.venv, installed on first use. */
function ensureSentenceTransformers(): void {
  const py = pythonFor({ log });
  try {
    execFileSync(py, ['-c', 'import sentence_transformers'], { stdio: 'ignore' });
  } catch {
    log('installing sentence-transformers into bench/.venv (torch is a large download)');
    execFileSync(py, ['-m', 'pip', 'install', '-q', 'sentence-transformers'], { stdio: ['ignore', 2, 2] });
  }
}

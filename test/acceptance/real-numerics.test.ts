/**
 * The product's vectors for the real retrieval models, e5-small-v2 and
 * bge-small-en-v1.5, fp32 and int8, against an independent pipeline on the
 * same ONNX file: Hugging Face `tokenizers` + onnxruntime + numpy pooling in
 * Python (scripts/models/reference_embed.py, in bench/.venv). 1,200 texts:
 * 800 2WikiMultiHopQA paragraphs, its 200 questions and 200 texts of eight
 * paragraphs each, over 512 tokens, so truncation is exercised (int8 one text
 * a batch on both sides: the int8 files quantize activations per batch). The models
 * come from Maven Central (scripts/models/maven.ts); without it the test
 * fails, naming the URL it could not reach. The fp32 files run with their
 * attention fused (src/encoder/fuse-attention.ts), the int8 files as published.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openFastSession } from '../../src/encoder/fast-session.js';
import { openEncoder } from '../../src/encoder/load-encoder.js';
import { resolveModelDir } from '../../src/encoder/model-files.js';
import { WordPieceTokenizer } from '../../src/encoder/wordpiece.js';
import { silentLogger } from '../../src/util/log.js';
import {
  fetchRealModel,
  modelFetchOptions,
  onnxFileOf,
  pythonFor,
  REAL_MODELS,
} from '../../scripts/models/real-models.js';
import { HAS_SHARED, makeTempDir, REPO_ROOT, sharedPath } from '../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);
const log = (line: string): void => void process.stderr.write(`${line}\n`);

function jsonLines<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let x = 0;
  let y = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] as number) * (b[i] as number);
    x += (a[i] as number) ** 2;
    y += (b[i] as number) ** 2;
  }
  return dot / Math.sqrt(x * y);
}

describe.skipIf(!HAS_SHARED)('real e5 and bge vectors against an independent Python pipeline', () => {
  const paragraphs = HAS_SHARED
    ? jsonLines<{ contents: string }>(sharedPath('data/2wiki-200/corpus.jsonl')).map((r) => r.contents)
    : [];
  const questions = HAS_SHARED
    ? jsonLines<{ question: string }>(sharedPath('data/2wiki-200/queries.jsonl')).map((r) => r.question)
    : [];
  const long = Array.from({ length: 200 }, (_, i) => paragraphs.slice(i * 7, i * 7 + 8).join('\n'));
  const texts = [...paragraphs.slice(0, 800), ...questions.slice(0, 200), ...long];

  for (const model of ['e5-small-v2', 'e5-small-v2-int8', 'bge-small-en-v1.5', 'bge-small-en-v1.5-int8']) {
    it(`${model}: cosine ≥ 0.9999 on ${texts.length} texts, those over 512 tokens included`, async () => {
      expect(texts.length).toBeGreaterThanOrEqual(1000);
      const dir = await fetchRealModel(model, modelFetchOptions(log));
      // int8 files quantize activations per batch (a vector depends on its batch mates): compare
      // one text a batch on both sides; fp32 is compared at the build's batch size
      const int8 = REAL_MODELS[model]?.variant === 'int8';
      const batch = int8 ? 1 : 32;
      const { encoder } = await openEncoder(
        {
          model,
          modelPath: dir,
          variant: REAL_MODELS[model]?.variant ?? 'fp32',
          revision: 'main',
          device: 'cpu',
          threads: 2,
          batchSize: batch,
        },
        { endpoint: '', cacheDir: '', offline: true, log: silentLogger, progress: false },
      );
      // fp32 BERT exports run with their attention fused (fuse-attention.ts): this test is what
      // holds the fused graph to the reference; int8 files run as published
      expect(encoder.graph).toMatch(int8 ? /^as published/ : /^fused attention \(12 layers\)$/);
      let ours: Float32Array[];
      const s = encoder.settings;
      const prefixed = texts.map((t) => s.passagePrefix + t);
      try {
        ours = await encoder.embedRaw(prefixed);
      } finally {
        await encoder.close();
      }
      const input = join(tmp.dir, `${model}.jsonl`);
      const out = join(tmp.dir, `${model}.f32`);
      writeFileSync(input, prefixed.map((t) => JSON.stringify(t)).join('\n') + '\n');
      execFileSync(
        pythonFor({ log }),
        [
          join(REPO_ROOT, 'scripts/models/reference_embed.py'),
          ...['--model-dir', dir, '--onnx', onnxFileOf(model), '--engine', 'ort', '--texts', input, '--out', out],
          ...['--max-length', String(s.maxLength), '--pooling', s.pooling, '--threads', '2'],
          ...['--batch-size', String(batch)],
        ],
        { stdio: ['ignore', 'ignore', 2] },
      );
      const raw = readFileSync(out);
      const ref = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
      expect(ref.length).toBe(texts.length * encoder.dim);
      const cos = ours.map((v, i) => cosine(v, ref.subarray(i * v.length, (i + 1) * v.length)));
      const worst = Math.min(...cos);
      const worstLong = Math.min(...cos.slice(1000));
      expect(worst, `the worst of ${texts.length} texts`).toBeGreaterThanOrEqual(0.9999);
      expect(worstLong, 'the worst text over 512 tokens').toBeGreaterThanOrEqual(0.9999);
    }, 900_000);
  }

  it('serves the file as published when the fused graph disagrees with it (a wrong head count)', async () => {
    const dir = await fetchRealModel('e5-small-v2', modelFetchOptions(log));
    const files = resolveModelDir(dir, REAL_MODELS['e5-small-v2']?.variant ?? 'fp32');
    const tokenizer = WordPieceTokenizer.fromFile(files.tokenizer);
    const opts = { device: 'cpu' as const, threads: 2 };
    expect(files.numHeads).toBe(12);
    // the right count fuses; 3 heads of 128 load and run, but attend differently: the probe must catch it
    for (const [heads, graph] of [
      [12, /^fused attention \(12 layers\)$/],
      [3, /^as published \(the fused graph disagreed: cosine -?0\.\d+\)$/],
    ] as const) {
      const opened = await openFastSession({ ...files, numHeads: heads }, opts, tokenizer, true);
      try {
        expect(opened.graph, `${heads} heads`).toMatch(graph);
        const out = await opened.session.run(
          new BigInt64Array([101n, 2000n, 102n]),
          new BigInt64Array(3).fill(1n),
          1,
          3,
          'last_hidden_state',
        );
        expect(out.data.length).toBe(3 * files.hiddenSize);
      } finally {
        await opened.session.close();
      }
    }
  }, 300_000);
});

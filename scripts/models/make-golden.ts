/**
 * Writes test/fixtures/golden/MODEL.json for the real models (golden.ts says
 * what they are): each model from its pinned archive, the reference's vectors
 * from Python (bench/.venv, installed on first use). Run after changing a
 * model's pin or the reference, and commit the result.
 *
 *   npm run make-golden -- [--model e5-small-v2]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveModelDir } from '../../src/encoder/model-files.js';
import { encoderSettingsFor } from '../../src/encoder/load-encoder.js';
import { hashFile } from '../../src/util/hash-file.js';
import { GOLDEN_TEXTS, goldenPath, goldenTexts, writeGolden } from './golden.js';
import {
  fetchRealModel,
  modelFetchOptions,
  onnxFileOf,
  productOrtVersion,
  pythonFor,
  REAL_MODELS,
  repoRoot,
} from './real-models.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : undefined;
}

const root = repoRoot();
const shared = process.env['RETRIEVER_MCP_SHARED'] ?? join(root, '..', 'shared');
const log = (line: string): void => void process.stderr.write(`${line}\n`);
const models = arg('model')
  ? [arg('model') as string]
  : ['e5-small-v2', 'e5-small-v2-int8', 'bge-small-en-v1.5', 'bge-small-en-v1.5-int8'];
const work = mkdtempSync(join(tmpdir(), 'golden-'));
try {
  for (const model of models) {
    const dir = await fetchRealModel(model, modelFetchOptions(log));
    const variant = REAL_MODELS[model]?.variant ?? 'fp32';
    const files = resolveModelDir(dir, variant);
    const s = encoderSettingsFor(
      { model, modelPath: dir, variant, revision: 'main', device: 'cpu', threads: 2, batchSize: 32 },
      files,
      model,
    );
    const batch = variant === 'int8' ? 1 : 32;
    const texts = goldenTexts(shared).map((t) => s.passagePrefix + t);
    const input = join(work, `${model}.jsonl`);
    const out = join(work, `${model}.f32`);
    writeFileSync(input, texts.map((t) => JSON.stringify(t)).join('\n') + '\n');
    execFileSync(
      pythonFor({ log }),
      [
        join(root, 'scripts/models/reference_embed.py'),
        ...['--model-dir', dir, '--onnx', onnxFileOf(model), '--engine', 'ort', '--texts', input, '--out', out],
        ...[
          '--max-length',
          String(s.maxLength),
          '--pooling',
          s.pooling,
          '--threads',
          '2',
          '--batch-size',
          String(batch),
        ],
      ],
      { stdio: ['ignore', 'ignore', 2] },
    );
    const raw = readFileSync(out);
    const vectors = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
    const dim = vectors.length / texts.length;
    writeGolden(
      goldenPath(root, model),
      {
        about: `${REAL_MODELS[model]?.about ?? model}; reference: tokenizers + onnxruntime (scripts/models/reference_embed.py)`,
        model,
        onnx_sha256: hashFile(files.onnx),
        tokenizer_sha256: hashFile(files.tokenizer),
        dim,
        prefix: s.passagePrefix,
        batch,
        texts: GOLDEN_TEXTS,
        onnxruntime: productOrtVersion(),
      },
      vectors,
    );
    log(`${model}: ${texts.length} golden vectors of ${dim} dimensions written`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

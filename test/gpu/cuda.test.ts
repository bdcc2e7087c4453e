import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Encoder } from '../../src/encoder/encoder.js';
import { OnnxSession } from '../../src/encoder/onnx-session.js';
import { openTinyEncoder, TINY_MODEL } from '../helpers/encoder.js';
import { HAS_SHARED, sharedPath } from '../helpers/paths.js';

/** Runs only where ONNX Runtime's CUDA provider loads (CI has no GPU: skipped there). */
async function cudaWorks(): Promise<boolean> {
  if (!HAS_SHARED) return false;
  try {
    await (await OnnxSession.create(join(TINY_MODEL, 'onnx/model.onnx'), { device: 'cuda', threads: 1 })).close();
    return true;
  } catch {
    return false;
  }
}

const HAS_CUDA = await cudaWorks();
if (!HAS_CUDA) process.stderr.write('test/gpu: no CUDA execution provider here; GPU tests skipped\n');

describe.skipIf(!HAS_CUDA)('CUDA execution provider', () => {
  let gpu: Encoder;
  beforeAll(async () => {
    gpu = await openTinyEncoder({ device: 'cuda', batchSize: 4 });
  });
  afterAll(async () => gpu?.close());

  it('matches the golden vectors on the GPU (fp32, 1e-3)', async () => {
    const golden = JSON.parse(readFileSync(sharedPath('models/tiny-e5/golden.json'), 'utf8')) as {
      cases: Array<{ text: string; embedding: number[] }>;
    };
    const texts = golden.cases.map((c) => c.text);
    const vecs = await (gpu as unknown as { embedRaw(t: string[]): Promise<Float32Array[]> }).embedRaw(texts);
    golden.cases.forEach((c, i) => {
      const err = Math.max(...c.embedding.map((x, d) => Math.abs(x - vecs[i]![d]!)));
      expect(err).toBeLessThan(1e-3);
    });
  });
});

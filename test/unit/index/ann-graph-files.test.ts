import { randomBytes } from 'node:crypto';
import { TEST_ANN } from '../../helpers/ann.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AnnBuilder, AnnIndex, type AnnParams } from '../../../src/index/dense/ann.js';
import { makeTempDir } from '../../helpers/paths.js';

const DIM = 16;
const PARAMS: AnnParams = { ...TEST_ANN, quantization: 'f32' };
const tmp = makeTempDir();
afterAll(() => tmp.cleanup());

function rows(first: number, n: number): Float32Array {
  const out = new Float32Array(n * DIM);
  for (let i = 0; i < n; i++) for (let d = 0; d < DIM; d++) out[i * DIM + d] = Math.sin((first + i + 1) * (d + 1));
  return out;
}

function saved(name: string, batches: Array<[number, number]>): string {
  const b = new AnnBuilder(DIM, PARAMS);
  for (const [first, n] of batches) b.add(first, rows(first, n), 1);
  const path = join(tmp.dir, name);
  b.save(path);
  return path;
}

describe('AnnBuilder.resume (real USearch)', () => {
  it('continues a graph of rows 0 … n−1 at row n', () => {
    const got = AnnBuilder.resume(saved('whole', [[0, 100]]), DIM, PARAMS);
    if (!('builder' in got)) throw new Error(got.reason);
    expect(got.builder.size).toBe(100);
    got.builder.add(100, rows(100, 20), 1);
    expect(got.builder.size).toBe(120);
  });

  it('refuses a graph whose rows are not chunks 0 … n−1, and says why', () => {
    // 100 rows, but 0–49 and 60–109: the build would restart at 100 and skip 50–59
    const gap = saved('gap', [
      [0, 50],
      [60, 50],
    ]);
    expect(AnnBuilder.resume(gap, DIM, PARAMS)).toEqual({ reason: `${gap} does not hold exactly chunks 0 to 99` });
    expect(AnnBuilder.resume(saved('offset', [[1, 100]]), DIM, PARAMS)).toHaveProperty('reason');
  });

  it('refuses an unreadable file and another dimension, and says why', () => {
    const junk = join(tmp.dir, 'junk');
    writeFileSync(junk, 'nope');
    expect(AnnBuilder.resume(junk, DIM, PARAMS)).toEqual({
      reason: expect.stringMatching(/junk is too short to be a graph \(4 bytes\)/),
    });
    expect(AnnBuilder.resume(saved('dim', [[0, 10]]), DIM * 2, PARAMS)).toEqual({
      reason: expect.stringMatching(/holds rows of 64 bytes, not 32-d f32 \(128 bytes\)/),
    });
  });

  it('a file that is not a graph is an INDEX_CORRUPT error, not a crash of the process', () => {
    const good = readFileSync(saved('good', [[0, 30]]));
    const cases: Record<string, Uint8Array> = {
      short: Buffer.from('not a graph'),
      random: randomBytes(good.length),
      truncated: good.subarray(0, 8 + 10 * DIM * 4),
    };
    for (const [name, bytes] of Object.entries(cases)) {
      const path = join(tmp.dir, `bad-${name}`);
      writeFileSync(path, bytes);
      for (const mmap of [true, false]) {
        expect(() => AnnIndex.open(path, DIM, PARAMS, { mmap }), name).toThrow(
          expect.objectContaining({ code: 'INDEX_CORRUPT' }),
        );
      }
    }
    const path = join(tmp.dir, 'good');
    expect(AnnIndex.open(path, DIM, PARAMS, { mmap: true }).size).toBe(30);
  });
});

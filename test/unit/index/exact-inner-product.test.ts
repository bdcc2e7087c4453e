import { describe, expect, it } from 'vitest';
import { exactInnerProduct } from '../../../src/index/dense/ann.js';

const DIM = 8;
const N = 200;

function lcg(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648 - 0.5;
  };
}

function bruteForce(matrix: Float32Array, q: Float32Array, k: number): number[] {
  const scores = Array.from({ length: N }, (_, i) => {
    let s = 0;
    for (let d = 0; d < DIM; d++) s += q[d]! * matrix[i * DIM + d]!;
    return { i, s };
  });
  return scores
    .sort((a, b) => b.s - a.s)
    .slice(0, k)
    .map((x) => x.i);
}

describe('exactInnerProduct (real USearch)', () => {
  const rand = lcg(7);
  const matrix = Float32Array.from({ length: N * DIM }, rand);
  // three queries in one buffer, as the encoder worker replies to a batch
  const batch = Float32Array.from({ length: 3 * DIM }, rand);

  it('finds the true top-k for each query of a batched buffer (views at a non-zero byteOffset)', () => {
    for (let j = 0; j < 3; j++) {
      const view = batch.subarray(j * DIM, (j + 1) * DIM);
      expect(new Set(exactInnerProduct(matrix, DIM, view, 5))).toEqual(new Set(bruteForce(matrix, view, 5)));
    }
  });

  it('reads a matrix view at a non-zero byteOffset from its own start', () => {
    const padded = new Float32Array(DIM + matrix.length);
    padded.set(matrix, DIM);
    const view = padded.subarray(DIM);
    const q = batch.slice(0, DIM);
    expect(new Set(exactInnerProduct(view, DIM, q, 5))).toEqual(new Set(bruteForce(matrix, q, 5)));
  });
});

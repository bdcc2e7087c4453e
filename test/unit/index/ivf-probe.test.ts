import { describe, expect, it } from 'vitest';
import { IvfKernels } from '../../../src/index/dense/ivf-kernels.js';
import { Quantizer } from '../../../src/index/dense/ivf-quantizer.js';

// Which lists a query probes: the means with the highest inner product (not the nearest by L2,
// as vectors are assigned), chosen among the lists of enough coarse parts.
const DIM = 16;

function unit(...xs: number[]): Float32Array {
  const v = new Float32Array(DIM);
  xs.forEach((x, i) => (v[i] = x));
  return v;
}

function rows(...vs: Float32Array[]): Float32Array {
  const out = new Float32Array(vs.length * DIM);
  vs.forEach((v, i) => out.set(v, i * DIM));
  return out;
}

describe('IVF probe order', () => {
  const kernels = new IvfKernels(DIM, DIM, 1, new Float32Array(DIM).fill(1), 4);

  it('ranks lists by inner product with the query, not by L2 to their means', () => {
    // q·a = 0.5 (L2 score 0.5 − 0.125); q·b = 0.54 (L2 score 0.54 − 0.405): L2 would pick a
    const a = unit(0.5);
    const b = unit(0.9 * 0.6, 0.9 * 0.8);
    const q = new Quantizer(kernels, { coarse: unit(1), fine: rows(a, b), children: Uint32Array.of(0, 2) });
    expect([...q.probe(unit(1), 1)]).toEqual([1]);
    expect([...q.probe(unit(1), 2)]).toEqual([1, 0]);
  });

  it('looks past the nearest coarse part until it has many times the probes in view', () => {
    // coarse part 0 (nearest the query) holds five lists of modest inner product; part 1, a little
    // farther, holds the list of the highest inner product
    const near = [0.3, 0.31, 0.32, 0.33, 0.34].map((x) => unit(x, 0.2));
    const best = unit(0.8, -0.55);
    const q = new Quantizer(kernels, {
      coarse: rows(unit(0.32, 0.2), unit(0.6, -0.6)),
      fine: rows(...near, best),
      children: Uint32Array.of(0, 5, 6),
    });
    const query = unit(1);
    // the query is nearer coarse mean 0 by L2, so part 0 is read first
    expect(0.32 - (0.32 ** 2 + 0.2 ** 2) / 2).toBeGreaterThan(0.6 - (0.6 ** 2 + 0.6 ** 2) / 2);
    expect([...q.probe(query, 1)]).toEqual([5]);
    expect([...q.probe(query, 3)]).toEqual([5, 4, 3]);
  });
});

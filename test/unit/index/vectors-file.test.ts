import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VectorReader, VectorWriter, type VectorDtype } from '../../../src/index/dense/vectors-file.js';
import { makeTempDir } from '../../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

function randomRows(n: number, dim: number): Float32Array[] {
  let seed = 5;
  const rand = () => (seed = (seed * 48271) % 2147483647) / 2147483647 - 0.5;
  return Array.from({ length: n }, () => Float32Array.from({ length: dim }, rand));
}

describe('VectorReader', () => {
  for (const dtype of ['f32', 'f16'] as VectorDtype[]) {
    it(`dotRow scores a ${dtype} row exactly as a dot product with row() does`, () => {
      const dim = 24;
      const rows = randomRows(50, dim);
      const path = join(tmp.dir, `v.${dtype}`);
      const w = new VectorWriter(path, dim, dtype, false);
      w.append(rows);
      w.close();
      const r = new VectorReader(path, dim, dtype, rows.length);
      try {
        const q = randomRows(1, dim)[0] as Float32Array;
        for (const num of [0, 17, 49, 3]) {
          const v = r.row(num);
          let want = 0;
          for (let i = 0; i < dim; i++) want += (q[i] as number) * (v[i] as number);
          expect(r.dotRow(num, q)).toBe(want);
          // and the row itself is the stored vector (exact in f32, to half precision in f16)
          const src = rows[num] as Float32Array;
          for (let i = 0; i < dim; i++) expect(v[i]).toBeCloseTo(src[i] as number, dtype === 'f32' ? 7 : 3);
        }
      } finally {
        r.close();
      }
    });
  }
});

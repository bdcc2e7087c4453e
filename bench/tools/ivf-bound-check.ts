/**
 * Re-scoring by upper bound against re-scoring every candidate, on a built IVF index: recall@10
 * against exact truth for both, and the rows the bound leaves to read, at each probes:rescore.
 *
 *   node dist/bench/tools/ivf-bound-check.js --index-dir D --name N --queries q.f32 --truth t.i32
 *     --dim 768 --settings 128:500 [--queries-used 300]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { IvfIndex } from '../../src/index/dense/ivf-index.js';
import { VectorReader } from '../../src/index/dense/vectors-file.js';
import { TopK } from '../../src/core/top-k.js';
import { arg } from '../lib/common.js';
import { readVectors } from '../lib/vectors.js';

const dir = join(arg('index-dir') as string, arg('name') as string);
const dim = Number(arg('dim', '768'));
const qv = readVectors(arg('queries') as string, dim);
const nq = Math.min(qv.length / dim, Number(arg('queries-used', '300')));
const truth = new Int32Array(readFileSync(arg('truth') as string).buffer.slice(0));
const tk = truth.length / (qv.length / dim);
const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
  dense: { vectors: { dtype: 'f16' | 'f32'; count: number } };
};
const count = m.dense.vectors.count;
const bounds = (arg('bounds', '1.2') as string).split(',').map(Number);

const vectors = new VectorReader(join(dir, 'vectors.bin'), dim, m.dense.vectors.dtype, count);
const out = [];
for (const errorBound of bounds)
  for (const [probes, rescore] of (arg('settings', '128:500') as string)
    .split(',')
    .map((s) => s.split(':').map(Number))) {
    const ivf = new IvfIndex(join(dir, 'dense.ivf'), { dim, count }, 'rebuild', { errorBound });
    let hitAll = 0;
    let hitBound = 0;
    let read = 0;
    let missedByBound = 0;
    for (let i = 0; i < nq; i++) {
      const q = qv.subarray(i * dim, (i + 1) * dim);
      const want = new Set(Array.from(truth.subarray(i * tk, i * tk + 10)));
      const cand = ivf.bounded(q, probes as number, rescore as number);
      const all = new TopK(10);
      const exact = new Map<number, number>();
      for (const c of cand) {
        const s = vectors.dotRow(c.num, q);
        exact.set(c.num, s);
        if (all.accepts(s, c.num)) all.push(s, c.num);
      }
      const bound = new TopK(10);
      for (const c of cand) {
        if (c.upper < bound.threshold()) break;
        read++;
        const s = exact.get(c.num) as number;
        if (bound.accepts(s, c.num)) bound.push(s, c.num);
      }
      // candidates whose exact score is above their bound: the bound failed for them
      for (const c of cand) if ((exact.get(c.num) as number) > c.upper) missedByBound++;
      for (const x of all.result()) if (want.has(x.num)) hitAll++;
      for (const x of bound.result()) if (want.has(x.num)) hitBound++;
    }
    ivf.close();
    out.push({
      errorBound,
      probes,
      rescore,
      recallAll: hitAll / (nq * 10),
      recallBound: hitBound / (nq * 10),
      readPerQuery: read / nq,
      boundFailedShare: missedByBound / (nq * (rescore as number)),
    });
  }
process.stdout.write(`${JSON.stringify(out)}\n`);

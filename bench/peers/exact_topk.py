"""Exact top-k by inner product of query rows against an index's vectors.bin (f16 or f32 rows, no
header), in blocks, with numpy's BLAS: the truth the ANN benches score recall against.

  python exact_topk.py --vectors vectors.bin --dtype f16 --dim 768 --queries q.f32 --k 10 --out truth.i32

Prints one JSON line with the seconds it took. Ties go to the smaller row, as our TopK does.
"""
import argparse, json, os, time
import numpy as np

p = argparse.ArgumentParser()
p.add_argument('--vectors', required=True)
p.add_argument('--dtype', choices=['f16', 'f32'], required=True)
p.add_argument('--dim', type=int, required=True)
p.add_argument('--queries', required=True)
p.add_argument('--k', type=int, default=10)
p.add_argument('--out', required=True)
p.add_argument('--block', type=int, default=500_000)
a = p.parse_args()
t0 = time.time()
dt = np.float16 if a.dtype == 'f16' else np.float32
n = os.path.getsize(a.vectors) // (a.dim * np.dtype(dt).itemsize)
X = np.memmap(a.vectors, dtype=dt, mode='r', shape=(n, a.dim))
Q = np.fromfile(a.queries, dtype=np.float32).reshape(-1, a.dim)
best_s = np.full((len(Q), a.k), -np.inf, dtype=np.float64)
best_i = np.zeros((len(Q), a.k), dtype=np.int64)
for start in range(0, n, a.block):
    B = np.asarray(X[start:start + a.block], dtype=np.float32)
    S = Q @ B.T
    k = min(a.k, S.shape[1])
    part = np.argpartition(-S, k - 1, axis=1)[:, :k]
    cand_s = np.concatenate([best_s, np.take_along_axis(S, part, axis=1).astype(np.float64)], axis=1)
    cand_i = np.concatenate([best_i, part + start], axis=1)
    order = np.lexsort((cand_i, -cand_s), axis=1)[:, :a.k]
    best_s = np.take_along_axis(cand_s, order, axis=1)
    best_i = np.take_along_axis(cand_i, order, axis=1)
best_i.astype(np.int32).tofile(a.out)
print(json.dumps({'rows': int(n), 'queries': int(len(Q)), 'seconds': round(time.time() - t0, 1)}))

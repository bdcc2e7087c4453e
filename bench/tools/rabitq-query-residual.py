"""RaBitQ's 1-bit estimate on real vectors, read against the whole query (IVF format 1) and against
the query's residual from its list's mean (format 2): the true top 10 found among the candidates
the estimate picks, every list probed. The check behind ivf-format.ts's version 2.

  bench/.venv-faiss/bin/python bench/tools/rabitq-query-residual.py \
    --vectors bench/data/calib/cal-indexes/cal-ivf/vectors.bin --queries bench/data/calib/cal-queries.f32 \
    --truth bench/data/calib/cal-truth-65536.i32 [--dim 384] [--lists 512] [--queries-used 200]
"""
import argparse

import faiss
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--vectors", required=True)  # f16 rows (a build's vectors.bin)
ap.add_argument("--queries", required=True)  # f32 rows
ap.add_argument("--truth", required=True)  # i32, exact top k per query
ap.add_argument("--dim", type=int, default=384)
ap.add_argument("--lists", type=int, default=512)
ap.add_argument("--queries-used", type=int, default=200)
a = ap.parse_args()

x = np.fromfile(a.vectors, dtype="<f2").astype("float32").reshape(-1, a.dim)
x /= np.linalg.norm(x, axis=1, keepdims=True)
q = np.fromfile(a.queries, dtype="<f4").reshape(-1, a.dim)
q /= np.linalg.norm(q, axis=1, keepdims=True)
truth = np.fromfile(a.truth, dtype="<i4").reshape(len(q), -1)[:, :10]
q, truth = q[: a.queries_used], truth[: a.queries_used]

km = faiss.Kmeans(a.dim, a.lists, niter=20, seed=1)
km.train(x)
c = km.centroids
assign = km.index.search(x, 1)[1][:, 0]
r = x - c[assign]
rot, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((a.dim, a.dim)))
rr = r @ rot.T
bits = rr > 0
factor = (np.linalg.norm(r, axis=1) ** 2) / np.abs(rr).sum(1)
along = (r * c[assign]).sum(1)
print(f"mean list-mean norm {np.linalg.norm(c, axis=1).mean():.3f}; "
      f"mean |q - c| to the nearest mean {np.mean([np.linalg.norm(v - c[np.argmax(c @ v)]) for v in q]):.3f}")


def found(residual: bool, cand: int) -> float:
    hit = 0
    for i, v in enumerate(q):
        cq = (c @ v)[assign]
        if residual:
            u = ((v[None, :] - c) @ rot.T)[assign]
            est = cq + along + factor * (2 * (bits * u).sum(1) - u.sum(1))
        else:
            u = rot @ v
            est = cq + factor * (2 * (bits * u).sum(1) - u.sum())
        top = np.argpartition(-est, cand)[:cand]
        best = top[np.argsort(-(x[top] @ v))[:10]]
        hit += len(set(best) & set(truth[i]))
    return hit / (len(q) * 10)


for cand in (200, 500, 2000):
    print(f"{cand} candidates: whole query {found(False, cand):.3f}, query residual {found(True, cand):.3f}", flush=True)

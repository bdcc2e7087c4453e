"""Distances to the k-th exact neighbour of the scale bench's queries, on prefixes of its vectors.

Shows how the generated clusters fill as the corpus grows (BENCHMARKS.md, "Recall as the corpus
grows"). Needs bench/data/scale/{q1000.f32,vec-2m.fbin} (made by `node dist/bench/scale.js`);
faiss (Debian's python3-faiss) is the exact-search peer, not a product dependency:

    /usr/bin/python3 bench/neighbour_distances.py
"""

import os

import faiss
import numpy as np

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "scale")
SIZES = [250_000, 500_000, 1_000_000, 2_000_000]
QUERIES = 200
RANKS = [1, 10, 11, 40, 100]


def main() -> None:
    dim = 768
    queries = np.fromfile(os.path.join(DATA, "q1000.f32"), dtype=np.float32).reshape(-1, dim)[:QUERIES]
    path = os.path.join(DATA, "vec-2m.fbin")
    count, file_dim = (int(x) for x in np.fromfile(path, dtype=np.int32, count=2))
    assert file_dim == dim, f"{path}: dimension {file_dim}, expected {dim}"
    rows = np.memmap(path, dtype=np.float32, mode="r", offset=8, shape=(count, dim))
    for size in SIZES:
        index = faiss.IndexFlatIP(dim)
        for start in range(0, size, 250_000):
            index.add(np.ascontiguousarray(rows[start : min(size, start + 250_000)]))
        sims, _ = index.search(queries, max(RANKS))
        dist = np.sqrt(np.maximum(0.0, 2.0 - 2.0 * sims))  # unit vectors: |a - b|² = 2 - 2 a·b
        med = {k: float(np.median(dist[:, k - 1])) for k in RANKS}
        cells = ", ".join(f"{k}: {med[k]:.4f}" for k in RANKS)
        print(f"{size}: median distance to neighbour {cells}; 10th/1st {med[10] / med[1]:.3f}, "
              f"11th/10th {med[11] / med[10]:.3f}", flush=True)


if __name__ == "__main__":
    main()

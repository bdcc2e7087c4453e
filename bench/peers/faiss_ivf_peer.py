#!/usr/bin/env python3
"""faiss beside our IVF index (bench/suites/ivf-scale.ts), on the vectors our index holds: an
index's vectors.bin (f16 or f32 rows, no header), read in blocks, since 21M x 768 float32 (64 GB)
fits no memory here. `build` trains `--factory` (any index_factory string over inner product,
e.g. IVF16384_HNSW32,PQ96,Refine(SQ8) or IVF16384_HNSW32,RaBitQ) on evenly spaced rows, adds
every vector block by block and writes the index; `serve` reads it back and, for each of
`--params` ('|'-separated ParameterSpace settings), measures recall@10 against exact truth, the
latency of one query at a time on one thread, and QPS at 100 queries a call on `--threads`.
`--coarse-from DENSE_IVF` fills faiss's coarse quantizer with the list means of our index
(dense.ivf's centroids) instead of faiss's own k-means, which at 16,384 lists takes hours on 2
cores: faiss then trains only its codes (PQ, SQ8, RaBitQ) and the partition is the same as ours.
Prints one JSON line. A bench peer, never a product dependency."""
import argparse, json, os, resource, struct, time
import numpy as np
import faiss

p = argparse.ArgumentParser()
p.add_argument('--phase', choices=['build', 'serve'], required=True)
p.add_argument('--vectors', required=True)
p.add_argument('--dtype', choices=['f16', 'f32'], default='f16')
p.add_argument('--dim', type=int, default=768)
p.add_argument('--factory', required=True)
p.add_argument('--index', required=True)
p.add_argument('--train', type=int, default=500_000)
p.add_argument('--block', type=int, default=100_000)
p.add_argument('--threads', type=int, default=2)
p.add_argument('--queries'); p.add_argument('--truth')
p.add_argument('--params', default='')
p.add_argument('--max-queries', type=int, default=1000)
p.add_argument('--coarse-from')
a = p.parse_args()
faiss.omp_set_num_threads(a.threads)

def rss_mib():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024
    return 0.0

dt = np.float16 if a.dtype == 'f16' else np.float32
n = os.path.getsize(a.vectors) // (a.dim * np.dtype(dt).itemsize)
X = np.memmap(a.vectors, dtype=dt, mode='r', shape=(n, a.dim))

def our_means(path, dim):
    """The list means of our IVF file (src/index/dense/ivf-format.ts): lists x dimPadded f32."""
    with open(path, 'rb') as f:
        if f.read(8) != b'RMCPIVF1':
            raise SystemExit(f'{path}: not an IVF file of ours')
        head = json.loads(f.read(struct.unpack('<I', f.read(4))[0]))
        f.seek(head['centroidsAt'])
        c = np.fromfile(f, dtype=np.float32, count=head['lists'] * head['dimPadded'])
    return np.ascontiguousarray(c.reshape(head['lists'], head['dimPadded'])[:, :dim])

def ivf_of(idx):
    """The IndexIVF inside a factory index (under IndexRefine when there is a refiner)."""
    ivf = faiss.extract_index_ivf(idx)
    if ivf is None:
        raise SystemExit(f'{a.factory}: no inverted file in it')
    return ivf

if a.phase == 'build':
    t0 = time.time()
    idx = faiss.index_factory(a.dim, a.factory, faiss.METRIC_INNER_PRODUCT)
    if a.coarse_from:
        ivf = ivf_of(idx)
        means = our_means(a.coarse_from, a.dim)
        if means.shape[0] != ivf.nlist:
            raise SystemExit(f'{a.coarse_from} has {means.shape[0]} lists, {a.factory} wants {ivf.nlist}')
        ivf.quantizer.add(means)  # trained and full: IndexIVF.train then trains only the codes
    size = min(n, a.train)
    rows = (np.arange(size, dtype=np.int64) * n) // size
    sample = np.ascontiguousarray(X[rows], dtype=np.float32)
    idx.train(sample)
    del sample
    train_s = time.time() - t0
    top = faiss.downcast_index(idx)
    refine = faiss.downcast_index(top.refine_index) if isinstance(top, faiss.IndexRefine) else None
    if refine is not None and isinstance(refine, faiss.IndexFlatCodes):
        # the refiner's codes (SQ8: 16 GB at 21M) grow by doubling when added block by block, and
        # the copy at the last doubling does not fit 24 GB: sized once, filled in place instead
        base = faiss.downcast_index(top.base_index)
        cs = refine.code_size
        refine.codes.resize(n * cs)
        codes = faiss.rev_swig_ptr(refine.codes.data(), n * cs)
        for start in range(0, n, a.block):
            block = np.ascontiguousarray(X[start:start + a.block], dtype=np.float32)
            base.add(block)
            codes[start * cs:(start + len(block)) * cs] = refine.sa_encode(block).ravel()
        refine.ntotal = n
        top.ntotal = n
    else:
        for start in range(0, n, a.block):
            idx.add(np.ascontiguousarray(X[start:start + a.block], dtype=np.float32))
    build_s = time.time() - t0
    faiss.write_index(idx, a.index)
    print(json.dumps({'phase': 'build', 'factory': a.factory, 'faissVersion': faiss.__version__, 'vectors': int(n),
                      'coarseFromOurs': bool(a.coarse_from), 'trainRows': int(size),
                      'trainS': round(train_s, 1), 'buildS': round(build_s, 1), 'indexBytes': os.path.getsize(a.index),
                      'rssBuiltMiB': round(rss_mib()), 'maxRssMiB': round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
else:
    q = np.fromfile(a.queries, dtype=np.float32).reshape(-1, a.dim)[:a.max_queries]
    truth = np.fromfile(a.truth, dtype=np.int32).reshape(-1, 10)[:len(q)]
    t0 = time.time()
    idx = faiss.read_index(a.index)
    open_s = time.time() - t0
    rss_open = rss_mib()
    rows = []
    for setting in [s for s in a.params.split('|') if s] or ['']:
        if setting:
            faiss.ParameterSpace().set_index_parameters(idx, setting)
        faiss.omp_set_num_threads(1)
        lat = []
        ids = np.zeros((len(q), 10), dtype=np.int64)
        for i in range(len(q)):
            t = time.perf_counter()
            _, ids[i:i + 1] = idx.search(q[i:i + 1], 10)
            lat.append((time.perf_counter() - t) * 1000)
        hits = sum(len(set(ids[i]) & set(truth[i])) for i in range(len(q)))
        faiss.omp_set_num_threads(a.threads)
        t = time.perf_counter()
        for i in range(0, len(q), 100):
            idx.search(q[i:i + 100], 10)
        qps = len(q) / (time.perf_counter() - t)
        lat.sort()
        rows.append({'setting': setting, 'recall10': hits / (len(q) * 10), 'p50ms': lat[len(lat) // 2],
                     'p99ms': lat[min(len(lat) - 1, int(len(lat) * 0.99))], 'qps100': qps})
    print(json.dumps({'phase': 'serve', 'factory': a.factory, 'faissVersion': faiss.__version__, 'queries': len(q), 'openS': round(open_s, 1),
                      'rssOpenMiB': round(rss_open), 'rssServingMiB': round(rss_mib()), 'rows': rows}))

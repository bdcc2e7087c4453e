#!/usr/bin/env python3
"""Reference peers for bench/ann.ts and bench/faiss-cpu.ts (faiss and hnswlib
from Debian's python3 packages or from PyPI's faiss-cpu in a bench venv).
Same vectors, same M/efConstruction, same queries and ground truth.
  --phase build | serve, --engine faiss-hnsw | faiss-flat | hnswlib | faiss-factory
faiss-factory builds `--factory` (any faiss index_factory string, e.g. HNSW32
or IVF1024,PQ96,RFlat) the way FlashRAG's and Search-R1's index builders do
(index_factory over inner product, trained where it needs training), and
serves it at each of `--params` ('|'-separated faiss ParameterSpace strings,
e.g. efSearch=64|efSearch=128 or nprobe=16,k_factor_rf=4).
Prints one JSON line. Never a product dependency."""
import argparse, json, resource, time, os
import numpy as np

p = argparse.ArgumentParser()
p.add_argument('--engine'); p.add_argument('--phase'); p.add_argument('--base'); p.add_argument('--queries')
p.add_argument('--truth'); p.add_argument('--index'); p.add_argument('--dim', type=int, default=768)
p.add_argument('--m', type=int, default=16); p.add_argument('--efc', type=int, default=128)
p.add_argument('--efs', default='16,32,64,128,256'); p.add_argument('--threads', type=int, default=2)
p.add_argument('--batch', type=int, default=1)
p.add_argument('--max-queries', type=int, default=0)
p.add_argument('--train', type=int, default=100_000, help='faiss-factory: training sample for an index that needs training; 0 = every vector')
p.add_argument('--offset', type=int, default=0, help='header bytes before the base vectors (8 for .fbin)')
p.add_argument('--factory', default='', help='faiss-factory: the index_factory string')
p.add_argument('--params', default='', help="faiss-factory: '|'-separated ParameterSpace settings to serve at ('' = the index's defaults)")
a = p.parse_args()

def rss_mib():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024
    return 0

def load(path, offset=0):
    return np.fromfile(path, dtype=np.float32, offset=offset).reshape(-1, a.dim)

if a.engine.startswith('faiss'):
    import faiss
    faiss.omp_set_num_threads(a.threads)
else:
    import hnswlib

if a.phase == 'build':
    x = load(a.base, a.offset)
    t0 = time.time()
    if a.engine == 'faiss-hnsw':
        idx = faiss.IndexHNSWFlat(a.dim, a.m, faiss.METRIC_INNER_PRODUCT)
        idx.hnsw.efConstruction = a.efc
        idx.add(x)
        t = time.time() - t0
        faiss.write_index(idx, a.index)
    elif a.engine == 'faiss-flat':
        idx = faiss.IndexFlatIP(a.dim)
        idx.add(x)
        t = time.time() - t0
        faiss.write_index(idx, a.index)
    elif a.engine == 'faiss-factory':
        idx = faiss.index_factory(a.dim, a.factory, faiss.METRIC_INNER_PRODUCT)
        if not idx.is_trained:
            # --train 0: on every vector, as FlashRAG's and Search-R1's builders do (faiss subsamples)
            if a.train and a.train < len(x):
                rng = np.random.default_rng(0)
                idx.train(x[np.sort(rng.choice(len(x), size=a.train, replace=False))])
            else:
                idx.train(x)
        train_s = time.time() - t0
        idx.add(x)
        t = time.time() - t0
        faiss.write_index(idx, a.index)
    else:
        idx = hnswlib.Index(space='ip', dim=a.dim)
        idx.init_index(max_elements=len(x), M=a.m, ef_construction=a.efc, random_seed=100)
        idx.set_num_threads(a.threads)
        idx.add_items(x, np.arange(len(x)))
        t = time.time() - t0
        idx.save_index(a.index)
    out = {'engine': a.engine, 'phase': 'build', 'buildS': t, 'vectors': len(x), 'indexBytes': os.path.getsize(a.index)}
    if a.engine == 'faiss-factory':
        out.update({'factory': a.factory, 'trainS': train_s, 'faissVersion': faiss.__version__})
    print(json.dumps(out))
else:
    q = load(a.queries)
    truth = np.fromfile(a.truth, dtype=np.int32).reshape(len(q), -1)
    if a.max_queries:
        q, truth = q[:a.max_queries], truth[:a.max_queries]
    t0 = time.time()
    if a.engine.startswith('faiss'):
        idx = faiss.read_index(a.index, faiss.IO_FLAG_MMAP if a.engine == 'faiss-flat' else 0)
    else:
        idx = hnswlib.Index(space='ip', dim=a.dim)
        idx.load_index(a.index)
        idx.set_num_threads(1)
    open_ms = (time.time() - t0) * 1000
    rss_open = rss_mib()
    if a.engine.startswith('faiss'):
        faiss.omp_set_num_threads(1 if a.batch == 1 else a.threads)
    params = [0]
    if a.engine in ('faiss-hnsw', 'hnswlib'):
        params = [int(e) for e in a.efs.split(',')]
    if a.engine == 'faiss-factory':
        params = a.params.split('|')
    rows = []
    for ef in params:
        if a.engine == 'faiss-factory' and ef:
            faiss.ParameterSpace().set_index_parameters(idx, ef)
        if a.engine == 'faiss-hnsw': idx.hnsw.efSearch = ef
        if a.engine == 'hnswlib': idx.set_ef(ef)
        lat = []
        ids_all = []
        k = 10
        start = time.time()
        for i in range(0, len(q), a.batch):
            qb = q[i:i + a.batch]
            t = time.time()
            if a.engine == 'hnswlib':
                ids, _ = idx.knn_query(qb, k=k)
            else:
                _, ids = idx.search(qb, k)
            lat.append((time.time() - t) * 1000)
            ids_all.append(ids)
        secs = time.time() - start
        ids = np.vstack(ids_all)
        hits = sum(len(set(ids[i][:10]) & set(truth[i][:10])) for i in range(len(q)))
        r5 = sum(len(set(ids[i][:5]) & set(truth[i][:5])) for i in range(len(q))) / (len(q) * 5)
        lat.sort()
        rows.append({'efSearch': ef, 'recall10': hits / (len(q) * 10), 'recall5': r5, 'p50ms': lat[len(lat) // 2],
                     'p99ms': lat[min(len(lat) - 1, int(len(lat) * 0.99))], 'qps': len(q) / secs, 'batch': a.batch})
    print(json.dumps({'engine': a.engine, 'phase': 'serve', 'openMs': open_ms, 'faissVersion': getattr(faiss, '__version__', None) if a.engine.startswith('faiss') else None, 'rssOpenMiB': rss_open, 'rssServingMiB': rss_mib(), 'rows': rows}))

#!/usr/bin/env python3
"""onnxruntime's Python API on the very ONNX file the product serves: the peer
of bench/suites/query-path.ts. Loads the model (2 intra-op threads, as ours),
runs one query, reports the process's resident memory, then encodes each query
of --queries alone (tokenizers + the session + numpy mean pooling, what an
encoder-only Python stack does per query) and reports each latency.

One JSON line on stdout: {"ort": version, "rss_mb": …, "anon_mb": …, "load_s": …, "ms": [...]}
(anon_mb: the anonymous part of the resident memory, without the pages of mapped files).
"""
import argparse, json, os, time
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument('--model-dir', required=True)
ap.add_argument('--onnx', default='onnx/model.onnx')
ap.add_argument('--queries', required=True, help='one JSON string a line, prefixes included')
ap.add_argument('--max-length', type=int, default=512)
ap.add_argument('--threads', type=int, default=2)
a = ap.parse_args()
os.environ['OMP_NUM_THREADS'] = str(a.threads)

import onnxruntime as ort
from ort_setup import open_ort


def rss_mb():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024
    return float('nan')


def anon_mb():
    for line in open('/proc/self/smaps_rollup'):
        if line.startswith('Anonymous:'):
            return int(line.split()[1]) / 1024
    return float('nan')


t0 = time.perf_counter()
tok, sess, names = open_ort(a.model_dir, a.onnx, a.max_length, a.threads)


def embed(text):
    e = tok.encode(text)
    ids = np.array([e.ids], np.int64)
    mask = np.ones_like(ids)
    feed = {'input_ids': ids, 'attention_mask': mask}
    if 'token_type_ids' in names:
        feed['token_type_ids'] = np.zeros_like(ids)
    h = sess.run(None, feed)[0]
    v = h.mean(1)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


queries = [json.loads(l) for l in open(a.queries)]
embed(queries[0])
load_s = time.perf_counter() - t0
rss = rss_mb()
anon = anon_mb()
for q in queries[:10]:  # warm-up, as ours gets
    embed(q)
ms = []
for q in queries:
    t = time.perf_counter()
    embed(q)
    ms.append((time.perf_counter() - t) * 1000)
print(json.dumps({'ort': ort.__version__, 'rss_mb': rss, 'anon_mb': anon, 'load_s': load_s, 'ms': ms}))

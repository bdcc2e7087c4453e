#!/usr/bin/env python3
"""The independent reference for the numerics suite and test: embeds the same texts
with Python tools, and times them.

  --engine st   sentence-transformers on the model directory (its own
                safetensors, tokenizer, pooling and normalisation)
  --engine ort  Hugging Face `tokenizers` + onnxruntime on the ONNX file (--onnx) +
                numpy mean/cls pooling and L2 normalisation

Texts come one JSON string per line; vectors go out as little-endian float32
rows. A JSON line with the timings goes to stdout.
"""
import argparse, json, os, time
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument('--model-dir', required=True)
ap.add_argument('--engine', choices=['st', 'ort'], required=True)
ap.add_argument('--onnx', default='onnx/model.onnx', help='the ONNX file, relative to the model directory')
ap.add_argument('--texts', required=True)
ap.add_argument('--queries', help='short texts timed one at a time (query latency)')
ap.add_argument('--out', required=True)
ap.add_argument('--max-length', type=int, required=True)
ap.add_argument('--pooling', choices=['mean', 'cls'], default='mean')
ap.add_argument('--batch-size', type=int, default=32)
ap.add_argument('--threads', type=int, default=2)
a = ap.parse_args()
texts = [json.loads(l) for l in open(a.texts)]
queries = [json.loads(l) for l in open(a.queries)] if a.queries else []

if a.engine == 'st':
    import torch
    torch.set_num_threads(a.threads)
    from sentence_transformers import SentenceTransformer
    model = SentenceTransformer(a.model_dir, device='cpu')
    model.max_seq_length = a.max_length
    embed = lambda ts, bs: model.encode(ts, batch_size=bs, normalize_embeddings=True, convert_to_numpy=True)
else:
    import onnxruntime as ort
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(a.model_dir, 'tokenizer.json'))
    tok.no_padding()
    tok.enable_truncation(a.max_length)
    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    sess = ort.InferenceSession(os.path.join(a.model_dir, a.onnx), so, providers=['CPUExecutionProvider'])
    names = [i.name for i in sess.get_inputs()]

    def embed(ts, bs):
        out = []
        # sorted by length, as sentence-transformers does, so batches pad little
        order = sorted(range(len(ts)), key=lambda i: -len(ts[i]))
        vecs = [None] * len(ts)
        for s in range(0, len(ts), bs):
            idx = order[s:s + bs]
            encs = tok.encode_batch([ts[i] for i in idx])
            L = max(len(e.ids) for e in encs)
            ids = np.zeros((len(idx), L), np.int64)
            mask = np.zeros((len(idx), L), np.int64)
            for r, e in enumerate(encs):
                ids[r, :len(e.ids)] = e.ids
                mask[r, :len(e.ids)] = 1
            feed = {'input_ids': ids, 'attention_mask': mask}
            if 'token_type_ids' in names:
                feed['token_type_ids'] = np.zeros_like(ids)
            h = sess.run(None, feed)[0].astype(np.float64)
            if a.pooling == 'cls':
                v = h[:, 0]
            else:
                m = mask[:, :, None].astype(np.float64)
                v = (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
            for r, i in enumerate(idx):
                vecs[i] = v[r].astype(np.float32)
        return np.stack(vecs)

embed(texts[:8], a.batch_size)  # warm-up
t0 = time.perf_counter()
vecs = embed(texts, a.batch_size)
seconds = time.perf_counter() - t0
vecs.astype('<f4').tofile(a.out)
lat = []
for q in queries:
    t = time.perf_counter()
    embed([q], 1)
    lat.append((time.perf_counter() - t) * 1000)
print(json.dumps({'engine': a.engine, 'texts': len(texts), 'seconds': seconds, 'texts_per_s': len(texts) / seconds,
                  'query_p50_ms': float(np.median(lat)) if lat else None, 'queries': len(lat)}))

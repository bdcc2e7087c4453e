#!/usr/bin/env python3
"""Encoder peers for bench/suites/encoder-real.ts: the same ONNX file, texts and
thread count through the Python stacks search-agent researchers use.

  --engine ort        onnxruntime's Python API + Hugging Face `tokenizers` +
                      numpy pooling, batches sorted by length
  --engine st-onnx    sentence-transformers with its ONNX backend
                      (backend="onnx", the model directory's file)
  --engine fastembed  fastembed's TextEmbedding on the model directory

Passages are embedded at --batch-size (texts/s); queries one at a time
(p50 and p99 ms, the first --single-queries of them). With --chunks, a second
set of passages (long chunks) at --batch-size; with --query-batch N, the first
N queries as one call at batch N (queries/s). One JSON line with the timings goes to stdout; an engine
that cannot load a local model says why in an "error" field instead.
"""
import argparse, json, os, time
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument('--engine', choices=['ort', 'st-onnx', 'fastembed'], required=True)
ap.add_argument('--model-dir', required=True)
ap.add_argument('--onnx', default='onnx/model.onnx', help='the ONNX file, relative to the model directory')
ap.add_argument('--passages', required=True, help='one JSON string a line, prefixes included')
ap.add_argument('--queries', required=True, help='one JSON string a line, prefixes included')
ap.add_argument('--max-length', type=int, default=512)
ap.add_argument('--pooling', choices=['mean', 'cls'], default='mean')
ap.add_argument('--batch-size', type=int, default=32)
ap.add_argument('--threads', type=int, default=2)
ap.add_argument('--chunks', help='optional: long chunks, one JSON string a line, prefixes included')
ap.add_argument('--single-queries', type=int, default=0, help='time only the first N queries singly (0: all)')
ap.add_argument('--query-batch', type=int, default=0, help='optional: the first N queries as one batch')
a = ap.parse_args()
passages = [json.loads(l) for l in open(a.passages)]
queries = [json.loads(l) for l in open(a.queries)]
os.environ['OMP_NUM_THREADS'] = str(a.threads)


def ort_embedder():
    from ort_setup import open_ort
    tok, sess, names = open_ort(a.model_dir, a.onnx, a.max_length, a.threads)

    def embed(ts, bs):
        order = sorted(range(len(ts)), key=lambda i: -len(ts[i]))
        out = [None] * len(ts)
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
            h = sess.run(None, feed)[0]
            if a.pooling == 'cls':
                v = h[:, 0]
            else:
                m = mask[:, :, None].astype(h.dtype)
                v = (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
            for r, i in enumerate(idx):
                out[i] = v[r]
        return out
    return embed


def st_embedder():
    import torch
    torch.set_num_threads(a.threads)
    from sentence_transformers import SentenceTransformer
    model = SentenceTransformer(a.model_dir, device='cpu', backend='onnx',
                                model_kwargs={'file_name': a.onnx, 'provider': 'CPUExecutionProvider'})
    model.max_seq_length = a.max_length
    return lambda ts, bs: model.encode(ts, batch_size=bs, normalize_embeddings=True, convert_to_numpy=True)


def fastembed_dir():
    """fastembed reads tokenizer_config.json and special_tokens_map.json, which the jars do not carry:
    a directory of links to the model's files with BERT's two files beside them."""
    if os.path.exists(os.path.join(a.model_dir, 'tokenizer_config.json')):
        return a.model_dir
    import tempfile
    d = tempfile.mkdtemp(prefix='fastembed-')
    for root, _, files in os.walk(a.model_dir):
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), a.model_dir)
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            os.symlink(os.path.join(root, f), os.path.join(d, rel))
    json.dump({'do_lower_case': True, 'model_max_length': a.max_length, 'tokenizer_class': 'BertTokenizer',
               'cls_token': '[CLS]', 'sep_token': '[SEP]', 'pad_token': '[PAD]', 'unk_token': '[UNK]',
               'mask_token': '[MASK]'}, open(os.path.join(d, 'tokenizer_config.json'), 'w'))
    json.dump({'cls_token': '[CLS]', 'sep_token': '[SEP]', 'pad_token': '[PAD]', 'unk_token': '[UNK]',
               'mask_token': '[MASK]'}, open(os.path.join(d, 'special_tokens_map.json'), 'w'))
    return d


def fastembed_embedder():
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType
    name = 'local/' + os.path.basename(os.path.normpath(a.model_dir))
    TextEmbedding.add_custom_model(
        model=name,
        pooling=PoolingType.MEAN if a.pooling == 'mean' else PoolingType.CLS,
        normalization=True,
        sources=ModelSource(hf='local/none'),
        dim=384,
        model_file=a.onnx,
    )
    model = TextEmbedding(model_name=name, specific_model_path=fastembed_dir(), threads=a.threads)
    return lambda ts, bs: list(model.embed(ts, batch_size=bs))


try:
    embed = {'ort': ort_embedder, 'st-onnx': st_embedder, 'fastembed': fastembed_embedder}[a.engine]()
    embed(passages[:8], a.batch_size)  # warm-up
    t0 = time.perf_counter()
    embed(passages, a.batch_size)
    seconds = time.perf_counter() - t0
    extra = {}
    if a.chunks:
        chunks = [json.loads(l) for l in open(a.chunks)]
        t0 = time.perf_counter()
        embed(chunks, a.batch_size)
        extra['chunks_per_s'] = len(chunks) / (time.perf_counter() - t0)
    lat = []
    for q in queries[:a.single_queries or len(queries)]:
        t = time.perf_counter()
        embed([q], 1)
        lat.append((time.perf_counter() - t) * 1000)
    if a.query_batch:
        t0 = time.perf_counter()
        embed(queries[:a.query_batch], a.query_batch)
        extra['query_batch_per_s'] = min(a.query_batch, len(queries)) / (time.perf_counter() - t0)
    print(json.dumps({'engine': a.engine, 'passages': len(passages), 'passages_per_s': len(passages) / seconds,
                      'query_p50_ms': float(np.percentile(lat, 50)), 'query_p99_ms': float(np.percentile(lat, 99)),
                      'queries': len(lat), **extra}))
except Exception as e:  # an engine that cannot run here is reported, not fatal
    print(json.dumps({'engine': a.engine, 'error': f'{type(e).__name__}: {e}'[:500]}))

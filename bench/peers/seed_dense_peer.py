#!/usr/bin/env python3
"""The closest faithful configuration of Search-R1's dense retrieval server
that runs without CUDA, for bench/side-by-side.ts.

Search-R1's search_r1/search/retrieval_server.py cannot serve dense
retrieval here: its encoder calls model.cuda() unconditionally. This script
keeps everything else it does, from the same PyPI libraries: FastAPI +
uvicorn in one process with a synchronous POST /retrieve (run in FastAPI's
thread pool); a transformers AutoModel + AutoTokenizer encoder with mean
pooling and L2 normalisation, fp32 on the CPU, one forward pass per request;
a faiss-cpu index over the same passage vectors our index holds (IndexFlatIP,
Search-R1's default, or IndexHNSWFlat with M 64 as its --faiss_type HNSW64
builds it); the request {"queries", "topk", "return_scores"} and the answer
{"result": [[{"document": {"id", "contents"}, "score"}]]}.

Nothing here comes from Search-R1's code. Bench only; run with the bench
virtual environment (bench/.venv: torch, transformers, faiss-cpu, fastapi,
uvicorn):

  bench/.venv/bin/python bench/peers/seed_dense_peer.py --index-dir indexes/NAME \
      --model-dir MODEL --corpus CORPUS.jsonl --faiss-type Flat --port 8001
"""
import argparse
import json
import os
from typing import List, Optional

import faiss
import numpy as np
import torch
import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel
from transformers import AutoModel, AutoTokenizer

p = argparse.ArgumentParser()
p.add_argument('--index-dir', required=True, help='one of our built indexes: its vectors.bin and manifest.json')
p.add_argument('--model-dir', required=True, help='the same model, as a Hugging Face directory (safetensors)')
p.add_argument('--corpus', required=True, help='the wiki-18 jsonl the index was built from (row i = vector i)')
p.add_argument('--faiss-type', choices=['Flat', 'HNSW64'], default='Flat')
p.add_argument('--ef-search', type=int, default=128)
p.add_argument('--port', type=int, default=8001)
p.add_argument('--threads', type=int, default=os.cpu_count() or 1)
a = p.parse_args()

torch.set_num_threads(a.threads)
faiss.omp_set_num_threads(a.threads)

manifest = json.load(open(os.path.join(a.index_dir, 'manifest.json')))
enc = manifest['dense']['encoder']
dim = enc['dim']
dtype = np.float16 if manifest['dense']['vectors']['dtype'] == 'f16' else np.float32
vecs = np.fromfile(os.path.join(a.index_dir, 'vectors.bin'), dtype=dtype).reshape(-1, dim).astype(np.float32)
if a.faiss_type == 'Flat':
    index = faiss.IndexFlatIP(dim)
else:
    index = faiss.IndexHNSWFlat(dim, 64, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efSearch = a.ef_search
index.add(vecs)

docs = []
with open(a.corpus) as f:
    for line in f:
        d = json.loads(line)
        docs.append({'id': d['id'], 'contents': d['contents']})
        if len(docs) == len(vecs):
            break

tokenizer = AutoTokenizer.from_pretrained(a.model_dir)
model = AutoModel.from_pretrained(a.model_dir).eval()


def encode(texts: List[str]) -> np.ndarray:
    t = tokenizer([enc['query_prefix'] + q for q in texts], max_length=enc['max_length'], padding=True,
                  truncation=True, return_tensors='pt')
    with torch.inference_mode():
        h = model(**t).last_hidden_state
        m = t['attention_mask'].unsqueeze(-1).float()
        e = (h * m).sum(1) / m.sum(1)
        e = torch.nn.functional.normalize(e, dim=-1)
    return e.numpy().astype(np.float32)


class QueryRequest(BaseModel):
    queries: List[str]
    topk: Optional[int] = None
    return_scores: bool = False


app = FastAPI()


@app.get('/ready')
def ready():
    return {'ok': True}


@app.post('/retrieve')
def retrieve(request: QueryRequest):
    scores, idxs = index.search(encode(request.queries), request.topk or 3)
    result = []
    for row_s, row_i in zip(scores.tolist(), idxs.tolist()):
        hits = [docs[i] for i in row_i]
        result.append([{'document': d, 'score': s} for d, s in zip(hits, row_s)] if request.return_scores else hits)
    return {'result': result}


uvicorn.run(app, host='127.0.0.1', port=a.port, log_level='warning')

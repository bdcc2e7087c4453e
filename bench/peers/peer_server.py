#!/usr/bin/env python3
"""Reference peer for bench/load.ts: a retrieval server built the way
Search-R1's search_r1/search/retrieval_server.py is (FastAPI + uvicorn, one
process; a synchronous /retrieve endpoint that FastAPI runs in its thread pool;
a BERT-base e5-style encoder in PyTorch with mean pooling and L2
normalisation; faiss IndexFlatIP, the Search-R1 default), on the same vectors
and passages as our load index. The encoder has random weights and the shape
of e5-base-v2 (12 layers, hidden 768, 12 heads, FFN 3072): the same FLOPs per
token as ours, none of the knowledge. Bench only; needs Debian's
python3-fastapi, python3-uvicorn, python3-torch and python3-faiss.

  /usr/bin/python3 bench/peers/peer_server.py --vectors V.fbin --corpus C.jsonl --tokenizer T/tokenizer.json --port 8000
"""
import argparse
import json
import os
import re
import unicodedata
from typing import List, Optional

import faiss
import numpy as np
import torch
import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel

p = argparse.ArgumentParser()
p.add_argument('--vectors', required=True, help='.fbin: int32 n, int32 dim, n*dim float32')
p.add_argument('--corpus', required=True, help='wiki-18 jsonl: {"id", "contents"} per line, row i = vector i')
p.add_argument('--tokenizer', required=True, help='a BERT tokenizer.json (its WordPiece vocabulary)')
p.add_argument('--port', type=int, default=8000)
p.add_argument('--threads', type=int, default=os.cpu_count() or 1)
p.add_argument('--max-length', type=int, default=256)
a = p.parse_args()

torch.set_num_threads(a.threads)
torch.manual_seed(0)

# --- tokenizer: BERT uncased WordPiece (the queries are short; this is not the bottleneck)
vocab = json.load(open(a.tokenizer))['model']['vocab']
UNK, CLS, SEP = vocab['[UNK]'], vocab['[CLS]'], vocab['[SEP]']
PUNCT = re.compile(r'(\W)')


def wordpiece(text: str) -> List[int]:
    text = unicodedata.normalize('NFD', text.lower())
    text = ''.join(c for c in text if unicodedata.category(c) != 'Mn')
    ids = [CLS]
    for word in (t for t in PUNCT.split(text) if t.strip()):
        start, pieces = 0, []
        while start < len(word):
            end, cur = len(word), None
            while start < end:
                sub = ('##' if start > 0 else '') + word[start:end]
                if sub in vocab:
                    cur = vocab[sub]
                    break
                end -= 1
            if cur is None:
                pieces = [UNK]
                break
            pieces.append(cur)
            start = end
        ids.extend(pieces)
    return ids[: a.max_length - 1] + [SEP]


# --- encoder: BERT-base shape, random weights
class Bert(torch.nn.Module):
    def __init__(self, vocab_size=30522, hidden=768, layers=12, heads=12, ffn=3072):
        super().__init__()
        self.word = torch.nn.Embedding(vocab_size, hidden)
        self.pos = torch.nn.Embedding(512, hidden)
        self.token_type = torch.nn.Embedding(2, hidden)
        self.norm = torch.nn.LayerNorm(hidden, eps=1e-12)
        layer = torch.nn.TransformerEncoderLayer(hidden, heads, ffn, activation='gelu', batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, ids, mask):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.norm(self.word(ids) + self.pos(pos) + self.token_type(torch.zeros_like(ids)))
        return self.encoder(x, src_key_padding_mask=mask == 0)


model = Bert().eval()


def encode(texts: List[str]) -> np.ndarray:
    toks = [wordpiece('query: ' + t) for t in texts]
    width = max(len(t) for t in toks)
    ids = torch.zeros((len(toks), width), dtype=torch.long)
    mask = torch.zeros((len(toks), width), dtype=torch.long)
    for i, t in enumerate(toks):
        ids[i, : len(t)] = torch.tensor(t)
        mask[i, : len(t)] = 1
    with torch.inference_mode():
        h = model(ids, mask)
        m = mask.unsqueeze(-1).float()
        emb = (h * m).sum(1) / m.sum(1)
        emb = torch.nn.functional.normalize(emb, dim=-1)
    return emb.numpy().astype(np.float32)


# --- index and passages
raw = np.fromfile(a.vectors, dtype=np.uint8)
n, dim = np.frombuffer(raw[:8].tobytes(), dtype=np.int32)
vecs = np.frombuffer(raw[8:].tobytes(), dtype=np.float32).reshape(n, dim)
index = faiss.IndexFlatIP(int(dim))
index.add(vecs)
docs = []
with open(a.corpus) as f:
    for line in f:
        docs.append(json.loads(line))
        if len(docs) == n:
            break


class QueryRequest(BaseModel):
    queries: List[str]
    topk: Optional[int] = 3
    return_scores: bool = True


app = FastAPI()


@app.get('/ready')
def ready():
    return {'ok': True}


@app.post('/retrieve')
def retrieve(request: QueryRequest):
    emb = encode(request.queries)
    scores, idxs = index.search(emb, request.topk)
    result = []
    for row_s, row_i in zip(scores.tolist(), idxs.tolist()):
        result.append([{'document': docs[i], 'score': s} for s, i in zip(row_s, row_i)])
    return {'result': result}


uvicorn.run(app, host='127.0.0.1', port=a.port, log_level='warning')

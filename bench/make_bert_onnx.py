#!/usr/bin/env python3
"""Writes a BERT-base-shaped encoder (hidden 768, 12 layers, 12 heads, FFN 3072,
vocab 30522) with RANDOM weights, in the Hugging Face ONNX layout of
intfloat/e5-base-v2 (inputs input_ids/attention_mask/token_type_ids, output
last_hidden_state), plus tokenizer.json/config.json copied from the tiny e5.
For timing only: it has the FLOPs of e5-base, none of its knowledge.
Needs Debian's python3-onnx (bench only, never a product dependency).

  /usr/bin/python3 bench/make_bert_onnx.py --out bench/data/bert-base-random [--layers 12 --hidden 768]
"""
import argparse, json, os, shutil
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

p = argparse.ArgumentParser()
p.add_argument('--out', required=True)
p.add_argument('--layers', type=int, default=12)
p.add_argument('--hidden', type=int, default=768)
p.add_argument('--heads', type=int, default=12)
p.add_argument('--ffn', type=int, default=3072)
p.add_argument('--vocab', type=int, default=30522)
p.add_argument('--tokenizer-from', default=os.path.join(os.path.dirname(__file__), '..', '..', 'shared', 'models', 'tiny-e5'))
a = p.parse_args()
H, L, NH, F, V = a.hidden, a.layers, a.heads, a.ffn, a.vocab
D = H // NH
rng = np.random.default_rng(0)
inits, nodes = [], []

def w(name, shape, std=0.02):
    inits.append(numpy_helper.from_array((rng.standard_normal(shape) * std).astype(np.float32), name))
    return name

def const(name, arr):
    inits.append(numpy_helper.from_array(np.asarray(arr), name))
    return name

def n(op, ins, outs, **kw):
    nodes.append(helper.make_node(op, ins, outs, **kw))
    return outs[0]

def layernorm(x, name):
    g = const(f'{name}.g', np.ones(H, np.float32)); b = const(f'{name}.b', np.zeros(H, np.float32))
    return n('LayerNormalization', [x, g, b], [f'{name}.out'], axis=-1, epsilon=1e-12)

def linear(x, fin, fout, name):
    y = n('MatMul', [x, w(f'{name}.w', (fin, fout))], [f'{name}.mm'])
    return n('Add', [y, const(f'{name}.bias', np.zeros(fout, np.float32))], [f'{name}.out'])

# embeddings
word = n('Gather', [w('emb.word', (V, H)), 'input_ids'], ['emb.w'])
tt = n('Gather', [w('emb.type', (2, H)), 'token_type_ids'], ['emb.t'])
seq_len = n('Gather', [n('Shape', ['input_ids'], ['ids.shape']), const('one_i', np.array(1, np.int64))], ['seq.len'])
pos_ids = n('Range', [const('zero_i', np.array(0, np.int64)), seq_len, const('step_i', np.array(1, np.int64))], ['pos.ids'])
pos = n('Gather', [w('emb.pos', (512, H)), pos_ids], ['emb.p'])
x = n('Add', [n('Add', [word, tt], ['emb.wt']), pos], ['emb.sum'])
x = layernorm(x, 'emb.ln')

# additive attention mask [B,1,1,S]: 0 for tokens, -10000 for padding
m = n('Cast', ['attention_mask'], ['mask.f'], to=TensorProto.FLOAT)
m = n('Mul', [n('Sub', [const('onef', np.array(1.0, np.float32)), m], ['mask.inv']), const('neg', np.array(-10000.0, np.float32))], ['mask.add'])
m = n('Unsqueeze', [m, const('ax12', np.array([1, 2], np.int64))], ['mask.4d'])

heads_shape = const('heads.shape', np.array([0, 0, NH, D], np.int64))
merge_shape = const('merge.shape', np.array([0, 0, H], np.int64))
scale = const('scale', np.array(1.0 / np.sqrt(D), np.float32))
for i in range(L):
    pre = f'l{i}'
    def split(t, perm, tag):
        r = n('Reshape', [t, heads_shape], [f'{pre}.{tag}.r'])
        return n('Transpose', [r], [f'{pre}.{tag}.t'], perm=perm)
    q = split(linear(x, H, H, f'{pre}.q'), [0, 2, 1, 3], 'q')
    k = split(linear(x, H, H, f'{pre}.k'), [0, 2, 3, 1], 'k')
    v = split(linear(x, H, H, f'{pre}.v'), [0, 2, 1, 3], 'v')
    s = n('Add', [n('Mul', [n('MatMul', [q, k], [f'{pre}.qk']), scale], [f'{pre}.qks']), m], [f'{pre}.scores'])
    probs = n('Softmax', [s], [f'{pre}.probs'], axis=-1)
    ctx = n('Transpose', [n('MatMul', [probs, v], [f'{pre}.ctx'])], [f'{pre}.ctx.t'], perm=[0, 2, 1, 3])
    ctx = n('Reshape', [ctx, merge_shape], [f'{pre}.ctx.m'])
    x = layernorm(n('Add', [x, linear(ctx, H, H, f'{pre}.o')], [f'{pre}.res1']), f'{pre}.ln1')
    h = linear(x, H, F, f'{pre}.ff1')
    # GELU(h) = 0.5 h (1 + erf(h / sqrt 2))
    e = n('Erf', [n('Div', [h, const(f'{pre}.sqrt2', np.array(np.sqrt(2.0), np.float32))], [f'{pre}.hd'])], [f'{pre}.erf'])
    g = n('Mul', [n('Mul', [h, const(f'{pre}.half', np.array(0.5, np.float32))], [f'{pre}.hh']), n('Add', [e, const(f'{pre}.onef', np.array(1.0, np.float32))], [f'{pre}.e1'])], [f'{pre}.gelu'])
    x = layernorm(n('Add', [x, linear(g, F, H, f'{pre}.ff2')], [f'{pre}.res2']), f'{pre}.ln2')
nodes.append(helper.make_node('Identity', [x], ['last_hidden_state']))

ints = lambda name: helper.make_tensor_value_info(name, TensorProto.INT64, ['batch', 'seq'])
graph = helper.make_graph(nodes, 'bert_random', [ints('input_ids'), ints('attention_mask'), ints('token_type_ids')],
                          [helper.make_tensor_value_info('last_hidden_state', TensorProto.FLOAT, ['batch', 'seq', H])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)], producer_name='retriever-mcp bench')
model.ir_version = 8
os.makedirs(os.path.join(a.out, 'onnx'), exist_ok=True)
onnx.save(model, os.path.join(a.out, 'onnx', 'model.onnx'))
shutil.copy(os.path.join(a.tokenizer_from, 'tokenizer.json'), a.out)
json.dump({'architectures': ['BertModel'], 'model_type': 'bert', 'hidden_size': H, 'num_hidden_layers': L,
           'num_attention_heads': NH, 'intermediate_size': F, 'max_position_embeddings': 512, 'vocab_size': V},
          open(os.path.join(a.out, 'config.json'), 'w'), indent=1)
params = sum(int(np.prod(t.dims)) for t in inits)
print(json.dumps({'out': a.out, 'params': params, 'layers': L, 'hidden': H}))

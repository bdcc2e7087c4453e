#!/usr/bin/env python3
"""Writes a BERT-base-shaped encoder (hidden 768, 12 layers, 12 heads, FFN 3072,
vocab 30522) with RANDOM weights, in the Hugging Face ONNX layout of
intfloat/e5-base-v2 (inputs input_ids/attention_mask/token_type_ids, output
last_hidden_state), plus tokenizer.json/config.json copied from the tiny e5.
For timing only: it has the FLOPs of e5-base, none of its knowledge.
The graph is scripts/models/export_bert_onnx.py's, fed random weights under BERT's
weight names. Needs numpy and onnx: Debian's python3-onnx or bench/.venv (bench
only, never a product dependency).

  /usr/bin/python3 bench/lib/make_bert_onnx.py --out bench/data/bert-base-random [--layers 12 --hidden 768]

--int8 also writes onnx/model_quantized.onnx the way the published int8 exports
were made (onnxruntime's dynamic quantization: int8 weights per channel,
activations quantized per run by DynamicQuantizeLinear); it needs onnxruntime
(bench/.venv, scripts/models/real-models.ts's pythonFor).
"""
import argparse, json, os, shutil, sys
import numpy as np
import onnx

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', 'scripts', 'models'))
from export_bert_onnx import build  # the one BERT graph writer, fed random weights here

p = argparse.ArgumentParser()
p.add_argument('--out', required=True)
p.add_argument('--layers', type=int, default=12)
p.add_argument('--hidden', type=int, default=768)
p.add_argument('--heads', type=int, default=12)
p.add_argument('--ffn', type=int, default=3072)
p.add_argument('--vocab', type=int, default=30522)
p.add_argument('--int8', action='store_true', help='also write onnx/model_quantized.onnx')
p.add_argument('--tokenizer-from', default=os.path.join(os.environ.get('RETRIEVER_MCP_SHARED', os.path.join(os.path.dirname(__file__), '..', '..', '..', 'shared')), 'models', 'tiny-e5'))
a = p.parse_args()
H, L, NH, F, V = a.hidden, a.layers, a.heads, a.ffn, a.vocab
rng = np.random.default_rng(0)


def rand(*shape):
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


# Hugging Face BERT's weight names and shapes (Linear weights as torch stores them, [out, in])
W = {
    'embeddings.word_embeddings.weight': rand(V, H),
    'embeddings.position_embeddings.weight': rand(512, H),
    'embeddings.token_type_embeddings.weight': rand(2, H),
}
def norm(key):
    W[f'{key}.weight'] = np.ones(H, np.float32)
    W[f'{key}.bias'] = np.zeros(H, np.float32)
def linear(key, fin, fout):
    W[f'{key}.weight'] = rand(fout, fin)
    W[f'{key}.bias'] = np.zeros(fout, np.float32)
norm('embeddings.LayerNorm')
for i in range(L):
    k = f'encoder.layer.{i}'
    for part in ('query', 'key', 'value'):
        linear(f'{k}.attention.self.{part}', H, H)
    linear(f'{k}.attention.output.dense', H, H)
    norm(f'{k}.attention.output.LayerNorm')
    linear(f'{k}.intermediate.dense', H, F)
    linear(f'{k}.output.dense', F, H)
    norm(f'{k}.output.LayerNorm')

config = {'architectures': ['BertModel'], 'model_type': 'bert', 'hidden_size': H, 'num_hidden_layers': L,
          'num_attention_heads': NH, 'intermediate_size': F, 'max_position_embeddings': 512, 'vocab_size': V,
          'hidden_act': 'gelu', 'layer_norm_eps': 1e-12}
model = build(config, W)
os.makedirs(os.path.join(a.out, 'onnx'), exist_ok=True)
onnx.save(model, os.path.join(a.out, 'onnx', 'model.onnx'))
shutil.copy(os.path.join(a.tokenizer_from, 'tokenizer.json'), a.out)
json.dump(config, open(os.path.join(a.out, 'config.json'), 'w'), indent=1)
if a.int8:
    from onnxruntime.quantization import QuantType, quantize_dynamic
    # as Optimum's avx512_vnni dynamic config, which the Xenova/LangChain4j int8 files came from
    quantize_dynamic(os.path.join(a.out, 'onnx', 'model.onnx'), os.path.join(a.out, 'onnx', 'model_quantized.onnx'),
                     per_channel=True, reduce_range=False, weight_type=QuantType.QInt8)
params = sum(int(v.size) for v in W.values())
print(json.dumps({'out': a.out, 'params': params, 'layers': L, 'hidden': H}))

"""What every onnxruntime-Python peer opens the same way: Hugging Face `tokenizers`
(no padding, truncated at the model's window) and an InferenceSession on the CPU
with the threads ours runs (intra-op as given, inter-op 1). Shared by
encoder_peers.py and ort_query_peer.py, which run from this folder."""
import os


def open_ort(model_dir, onnx_file, max_length, threads):
    """(tokenizer, session, the session's input names)."""
    import onnxruntime as ort
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(model_dir, 'tokenizer.json'))
    tok.no_padding()
    tok.enable_truncation(max_length)
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(os.path.join(model_dir, onnx_file), so, providers=['CPUExecutionProvider'])
    return tok, sess, [i.name for i in sess.get_inputs()]

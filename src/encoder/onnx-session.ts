import * as ort from 'onnxruntime-node';
import { RetrieverError } from '../errors.js';
import { halfArrayToFloat } from './pooling.js';

/**
 * The only importer of onnxruntime-node. Owns one InferenceSession and turns
 * padded id matrices into float32 outputs. ORT's Node binding runs inference
 * synchronously on the calling thread, so this module is loaded inside the
 * encoder worker thread, never on the server's event loop.
 */
// ONNX Runtime logs a failure to load an execution provider (the CUDA provider on a
// CPU-only machine) in red on stderr before it throws; the throw becomes one
// RetrieverError naming the fix, so its own log lines are noise. Set before the first
// session, since the runtime reads it once per process.
ort.env.logLevel = 'fatal';

export type Device = 'cpu' | 'cuda';

export interface SessionOptions {
  device: Device;
  /** Intra-op threads; 0 lets ORT decide (one per physical core). */
  threads: number;
  cudaDeviceId?: number;
}

export interface OutputTensor {
  name: string;
  data: Float32Array;
  dims: readonly number[];
}

export const CUDA_INSTALL_HINT =
  'install the CUDA execution provider with `ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node` (or a fresh `ONNXRUNTIME_NODE_INSTALL=cuda12 npm install`; needs CUDA 12 and cuDNN 9), or use --device cpu';

export class OnnxSession {
  private constructor(
    private readonly session: ort.InferenceSession,
    readonly device: Device,
  ) {}

  /** `model`: a file, or the bytes of one (a graph rewritten in memory, fuse-attention.ts). */
  static async create(model: string | Uint8Array, opts: SessionOptions): Promise<OnnxSession> {
    const modelPath = typeof model === 'string' ? model : 'the rewritten graph';
    const providers: ort.InferenceSession.ExecutionProviderConfig[] =
      opts.device === 'cuda'
        ? [{ name: 'cuda', deviceId: opts.cudaDeviceId ?? 0 } as ort.InferenceSession.ExecutionProviderConfig]
        : ['cpu'];
    try {
      const settings: ort.InferenceSession.SessionOptions = {
        executionProviders: providers,
        graphOptimizationLevel: 'all',
        logSeverityLevel: 3, // errors only: ORT warnings would flood stderr
        interOpNumThreads: 1,
        ...(opts.threads > 0 ? { intraOpNumThreads: opts.threads } : {}),
      };
      const session =
        typeof model === 'string'
          ? await ort.InferenceSession.create(model, settings)
          : await ort.InferenceSession.create(model, settings);
      return new OnnxSession(session, opts.device);
    } catch (err) {
      const msg = (err as Error).message ?? String(err);
      if (opts.device === 'cuda') {
        throw new RetrieverError(
          'MODEL',
          `cannot start ONNX Runtime's CUDA provider (${firstLine(msg)}): ${CUDA_INSTALL_HINT}`,
          { cause: err },
        );
      }
      throw new RetrieverError('MODEL', `cannot load ONNX model ${modelPath}: ${firstLine(msg)}`, { cause: err });
    }
  }

  get inputNames(): readonly string[] {
    return this.session.inputNames;
  }

  get outputNames(): readonly string[] {
    return this.session.outputNames;
  }

  /** Runs a padded batch; `ids` and `mask` are row-major [batch, seqLen]. */
  async run(
    ids: BigInt64Array,
    mask: BigInt64Array,
    batch: number,
    seqLen: number,
    output: string,
  ): Promise<OutputTensor> {
    const dims = [batch, seqLen];
    const feeds: Record<string, ort.Tensor> = {};
    for (const name of this.session.inputNames) {
      if (name === 'input_ids') feeds[name] = new ort.Tensor('int64', ids, dims);
      else if (name === 'attention_mask') feeds[name] = new ort.Tensor('int64', mask, dims);
      else if (name === 'token_type_ids') feeds[name] = new ort.Tensor('int64', new BigInt64Array(ids.length), dims);
      else
        throw new RetrieverError('MODEL', `the ONNX model wants an input "${name}" that a BERT encoder does not have`);
    }
    const result = await this.session.run(feeds, [output]);
    const t = result[output];
    if (!t) throw new RetrieverError('MODEL', `the ONNX model returned no "${output}" output`);
    let data: Float32Array;
    if (t.type === 'float32') data = t.data as Float32Array;
    else if (t.type === 'float16')
      data = halfArrayToFloat(
        new Uint16Array((t.data as Uint16Array).buffer, (t.data as Uint16Array).byteOffset, t.size),
      );
    else
      throw new RetrieverError(
        'MODEL',
        `the ONNX model's "${output}" output is ${t.type}; expected float32 or float16`,
      );
    return { name: output, data, dims: t.dims };
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

function firstLine(s: string): string {
  return s.split('\n')[0] ?? s;
}

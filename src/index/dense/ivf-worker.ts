import { parentPort, workerData } from 'node:worker_threads';
import type { IvfHeader } from './ivf-format.js';
import { encodeRows } from './ivf-encode.js';
import { IvfKernels } from './ivf-kernels.js';
import { Quantizer, type QuantizerMeans } from './ivf-quantizer.js';
import { VectorReader, type VectorDtype } from './vectors-file.js';

/** ivf-pool.ts's threads: the IVF build's nearest-mean labels (k-means) and its encoding pass. */
export interface IvfWorkerInit {
  shape: Pick<IvfHeader, 'dim' | 'dimPadded' | 'window' | 'rounds'>;
  signs: Float32Array;
  vectors?: { path: string; dtype: VectorDtype; count: number };
}

export type IvfWorkerRequest =
  | { op: 'nearest'; id: number; points: Float32Array; means: Float32Array }
  | { op: 'means'; id: number; means: QuantizerMeans }
  | { op: 'encode'; id: number; start: number; count: number };

const init = workerData as IvfWorkerInit;
const kernels = new IvfKernels(init.shape.dimPadded, init.shape.window, init.shape.rounds, init.signs, 1);
const reader = init.vectors
  ? new VectorReader(init.vectors.path, init.shape.dim, init.vectors.dtype, init.vectors.count)
  : undefined;
let quantizer: { q: Quantizer; means: QuantizerMeans } | undefined;

parentPort?.on('message', (msg: IvfWorkerRequest) => {
  try {
    if (msg.op === 'nearest') {
      const n = msg.points.length / init.shape.dimPadded;
      const labels = new Uint32Array(n);
      kernels.nearestOf(msg.points, msg.means, labels, new Float32Array(n));
      parentPort?.postMessage({ id: msg.id, labels }, [labels.buffer]);
    } else if (msg.op === 'means') {
      quantizer = { q: new Quantizer(kernels, msg.means), means: msg.means };
      parentPort?.postMessage({ id: msg.id });
    } else {
      if (!reader || !quantizer) throw new Error('encode before the vectors and means were given');
      const raw = reader.readRange(msg.start, msg.count);
      const { records, lists } = encodeRows(raw, init.shape.dim, init.shape, quantizer.q, kernels, quantizer.means);
      parentPort?.postMessage({ id: msg.id, records, lists }, [records.buffer, lists.buffer] as ArrayBuffer[]);
    }
  } catch (err) {
    parentPort?.postMessage({ id: msg.id, error: (err as Error).message });
  }
});

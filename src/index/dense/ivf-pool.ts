import { Worker } from 'node:worker_threads';
import { builtFileUrl } from '../../util/built-file.js';
import type { IvfWorkerInit, IvfWorkerRequest } from './ivf-worker.js';
import type { QuantizerMeans } from './ivf-quantizer.js';

type Pending = { resolve: (m: Record<string, unknown>) => void; reject: (e: Error) => void };
type Request = IvfWorkerRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/**
 * Threads for the IVF build's heavy loops (each with its own WebAssembly kernels): k-means
 * labels and the encoding pass, spread over `size` threads, least loaded first. A build on two
 * cores encodes wiki-18's 21M vectors in about half the time of one thread.
 */
export class IvfPool {
  private readonly workers: Worker[] = [];
  private readonly load: number[] = [];
  private readonly pending = new Map<number, Pending & { worker: number }>();
  private next = 0;
  private failed: Error | undefined;

  constructor(size: number, init: IvfWorkerInit) {
    for (let w = 0; w < size; w++) {
      const worker = new Worker(builtFileUrl('./ivf-worker.js', import.meta.url), { workerData: init });
      worker.on('message', (m: { id: number; error?: string }) => {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        this.load[p.worker] = (this.load[p.worker] as number) - 1;
        if (m.error !== undefined) p.reject(new Error(m.error));
        else p.resolve(m as Record<string, unknown>);
      });
      const fail = (err: Error): void => {
        this.failed ??= err;
        for (const [id, p] of this.pending) {
          if (p.worker !== w) continue;
          this.pending.delete(id);
          p.reject(err);
        }
      };
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`an IVF build thread exited (${code})`)));
      this.workers.push(worker);
      this.load.push(0);
    }
  }

  get size(): number {
    return this.workers.length;
  }

  /** Each row's nearest of `means` (k-means labels). */
  async nearest(points: Float32Array, means: Float32Array): Promise<Uint32Array> {
    const m = await this.send({ op: 'nearest', points, means }, [points.buffer as ArrayBuffer]);
    return m['labels'] as Uint32Array;
  }

  /** Gives every thread the trained means, before `encode`. */
  async setMeans(means: QuantizerMeans): Promise<void> {
    await Promise.all(this.workers.map((_, w) => this.send({ op: 'means', means }, [], w)));
  }

  /** The build records of vectors [start, start + count). */
  async encode(start: number, count: number): Promise<{ records: Uint8Array; lists: Uint32Array }> {
    const m = await this.send({ op: 'encode', start, count }, []);
    return { records: m['records'] as Uint8Array, lists: m['lists'] as Uint32Array };
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  private send(req: Request, transfer: ArrayBuffer[], to?: number): Promise<Record<string, unknown>> {
    if (this.failed) return Promise.reject(this.failed);
    const w = to ?? this.load.indexOf(Math.min(...this.load));
    const id = this.next++;
    this.load[w] = (this.load[w] as number) + 1;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, worker: w });
      (this.workers[w] as Worker).postMessage({ ...req, id }, transfer);
    });
  }
}

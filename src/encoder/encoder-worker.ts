import { parentPort, workerData } from 'node:worker_threads';
import { describeError } from '../errors.js';
import { EmbedCore, type EmbedCoreOptions } from './embed-core.js';
import type { ModelFiles } from './model-files.js';

/**
 * The encoder's own thread: ONNX Runtime's Node binding runs inference
 * synchronously, so the session lives here and the server's event loop stays
 * free. Requests are served one at a time, in arrival order.
 */
export interface EncoderWorkerInit {
  files: ModelFiles;
  options: EmbedCoreOptions;
}

export type ToEncoder = { type: 'embed'; id: number; texts: string[] } | { type: 'close' };

export type FromEncoder =
  | { type: 'ready'; dim: number; output: string }
  | { type: 'init-error'; message: string }
  | { type: 'done'; id: number; dim: number; data: Float32Array }
  | { type: 'error'; id: number; message: string };

const port = parentPort;
if (port) {
  const init = workerData as EncoderWorkerInit;
  let core: EmbedCore | undefined;
  const queue: ToEncoder[] = [];
  let busy = false;
  const pump = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    while (queue.length > 0) {
      const msg = queue.shift() as ToEncoder;
      if (msg.type === 'close') {
        await core?.close();
        process.exit(0);
      }
      try {
        const vecs = await (core as EmbedCore).embed(msg.texts);
        const dim = (core as EmbedCore).dim;
        const data = new Float32Array(vecs.length * dim);
        vecs.forEach((v, i) => data.set(v, i * dim));
        const reply: FromEncoder = { type: 'done', id: msg.id, dim, data };
        port.postMessage(reply, [data.buffer]);
      } catch (err) {
        const reply: FromEncoder = { type: 'error', id: msg.id, message: describeError(err) };
        port.postMessage(reply);
      }
    }
    busy = false;
  };
  EmbedCore.open(init.files, init.options).then(
    (c) => {
      core = c;
      const reply: FromEncoder = { type: 'ready', dim: c.dim, output: c.output };
      port.postMessage(reply);
      port.on('message', (msg: ToEncoder) => {
        queue.push(msg);
        void pump();
      });
    },
    (err: unknown) => {
      const reply: FromEncoder = { type: 'init-error', message: describeError(err) };
      port.postMessage(reply);
    },
  );
}

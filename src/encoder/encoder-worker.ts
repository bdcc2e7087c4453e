import { parentPort } from 'node:worker_threads';
import { describeError } from '../errors.js';
import { EmbedCancelled, EmbedCore, type EmbedCoreOptions } from './embed-core.js';
import type { ModelFiles } from './model-files.js';

/**
 * The process's encoder thread. ONNX Runtime's Node binding runs inference
 * synchronously and cannot be loaded again in a second thread of the same
 * process, so one long-lived thread hosts every encoder session and serves
 * requests one at a time, in arrival order; the server's event loop stays free.
 */
export type ToEncoder =
  | { type: 'open'; session: number; files: ModelFiles; options: EmbedCoreOptions }
  | { type: 'embed'; session: number; id: number; texts: string[]; cancel?: Int32Array }
  | { type: 'close'; session: number };

export type FromEncoder =
  | { type: 'ready'; session: number; dim: number; output: string; graph: string }
  | { type: 'open-error'; session: number; message: string }
  | { type: 'done'; session: number; id: number; dim: number; data: Float32Array }
  | { type: 'error'; session: number; id: number; message: string; cancelled?: true }
  | { type: 'closed'; session: number };

const port = parentPort;
if (port) {
  const sessions = new Map<number, EmbedCore>();
  const queue: ToEncoder[] = [];
  let busy = false;

  const handle = async (msg: ToEncoder): Promise<FromEncoder> => {
    if (msg.type === 'open') {
      try {
        const core = await EmbedCore.open(msg.files, msg.options);
        sessions.set(msg.session, core);
        return { type: 'ready', session: msg.session, dim: core.dim, output: core.output, graph: core.graph };
      } catch (err) {
        return { type: 'open-error', session: msg.session, message: describeError(err) };
      }
    }
    if (msg.type === 'close') {
      await sessions.get(msg.session)?.close();
      sessions.delete(msg.session);
      return { type: 'closed', session: msg.session };
    }
    const core = sessions.get(msg.session);
    try {
      if (!core) throw new Error(`encoder session ${msg.session} is not open`);
      // the caller sets cancel[0] (shared memory) to stop between batches
      const cancel = msg.cancel;
      const vecs = await core.embed(msg.texts, cancel ? () => Atomics.load(cancel, 0) !== 0 : undefined);
      const data = new Float32Array(vecs.length * core.dim);
      vecs.forEach((v, i) => data.set(v, i * core.dim));
      return { type: 'done', session: msg.session, id: msg.id, dim: core.dim, data };
    } catch (err) {
      const cancelled = err instanceof EmbedCancelled ? { cancelled: true as const } : {};
      return { type: 'error', session: msg.session, id: msg.id, message: describeError(err), ...cancelled };
    }
  };

  const pump = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    while (queue.length > 0) {
      const reply = await handle(queue.shift() as ToEncoder);
      if (reply.type === 'done') port.postMessage(reply, [reply.data.buffer as ArrayBuffer]);
      else port.postMessage(reply);
    }
    busy = false;
  };

  port.on('message', (msg: ToEncoder) => {
    queue.push(msg);
    void pump();
  });
}

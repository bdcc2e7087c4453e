import { collectGarbage } from '../util/collect-garbage.js';
import type { TransferListItem } from 'node:worker_threads';
import { describeError } from '../errors.js';
import { EmbedCancelled, EmbedCore, type CoreTiming, type EmbedCoreOptions } from './embed-core.js';
import type { ModelFiles } from './model-files.js';

export type ToEncoder =
  | { type: 'open'; session: number; files: ModelFiles; options: EmbedCoreOptions }
  | {
      type: 'embed';
      session: number;
      id: number;
      texts: string[];
      cancel?: Int32Array;
      progress?: boolean;
      /** Query texts: each runs alone where the graph quantizes per run (EmbedCore.embed). */
      queries?: boolean;
      /** Send each batch's vectors as it is done (a build's resumable window); skip these batches of the plan. */
      stream?: { skip: number[] };
    }
  | { type: 'close'; session: number };

export type FromEncoder =
  | { type: 'ready'; session: number; dim: number; output: string; graph: string }
  | { type: 'open-error'; session: number; message: string }
  | { type: 'progress'; session: number; id: number; done: number }
  | { type: 'batch'; session: number; id: number; batch: number; rows: Uint32Array; dim: number; data: Float32Array }
  | { type: 'done'; session: number; id: number; dim: number; data: Float32Array; timing: CoreTiming }
  | { type: 'error'; session: number; id: number; message: string; cancelled?: true }
  | { type: 'closed'; session: number };

/** Where an encoder host's messages come from and go to: a worker thread's port, or a child process's IPC. */
export interface EncoderPort {
  onMessage(listener: (msg: ToEncoder) => void): void;
  post(msg: FromEncoder, transfer?: TransferListItem[]): void;
}

/**
 * Serves encoder sessions over `port`, one request at a time in arrival
 * order: open, embed (with a progress message after each batch when asked,
 * and a shared-memory flag checked between batches), close.
 */
export function serveEncoder(port: EncoderPort): void {
  const sessions = new Map<number, EmbedCore>();
  const queue: ToEncoder[] = [];
  let busy = false;

  const handle = async (msg: ToEncoder): Promise<FromEncoder> => {
    if (msg.type === 'open') {
      try {
        const core = await EmbedCore.open(msg.files, msg.options);
        sessions.set(msg.session, core);
        // the model file and its fused rewrite are garbage now: free them before the thread idles
        collectGarbage();
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
      const onBatch = msg.progress
        ? (done: number) => port.post({ type: 'progress', session: msg.session, id: msg.id, done })
        : undefined;
      const timing: CoreTiming = { tokenize: 0, run: 0, pool: 0 };
      const stream = msg.stream
        ? {
            skip: new Set(msg.stream.skip),
            onVectors: (batch: number, rows: readonly number[], vectors: readonly Float32Array[]) => {
              const data = new Float32Array(vectors.length * core.dim);
              vectors.forEach((v, i) => data.set(v, i * core.dim));
              const r = Uint32Array.from(rows);
              port.post({ type: 'batch', session: msg.session, id: msg.id, batch, rows: r, dim: core.dim, data }, [
                data.buffer as ArrayBuffer,
                r.buffer as ArrayBuffer,
              ]);
            },
          }
        : undefined;
      const vecs = await core.embed(
        msg.texts,
        cancel ? () => Atomics.load(cancel, 0) !== 0 : undefined,
        onBatch,
        timing,
        msg.queries === true,
        stream,
      );
      // streamed vectors went out batch by batch: the reply only closes the request
      const data = new Float32Array(stream ? 0 : vecs.length * core.dim);
      if (!stream) vecs.forEach((v, i) => data.set(v, i * core.dim));
      return { type: 'done', session: msg.session, id: msg.id, dim: core.dim, data, timing };
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
      if (reply.type === 'done') port.post(reply, [reply.data.buffer as ArrayBuffer]);
      else port.post(reply);
    }
    busy = false;
  };

  port.onMessage((msg) => {
    queue.push(msg);
    void pump();
  });
}

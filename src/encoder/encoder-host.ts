import { Worker } from 'node:worker_threads';
import { RetrieverError } from '../errors.js';
import type { FromEncoder, ToEncoder } from './encoder-worker.js';
import { builtFileUrl } from '../util/built-file.js';

type Listener = (msg: FromEncoder) => void;

/**
 * The one encoder thread of this process, started on first use and shared
 * by every encoder (see encoder-worker.ts for why there is only one).
 * It never keeps the process alive by itself.
 */
class EncoderHost {
  private worker: Worker | undefined;
  private readonly listeners = new Map<number, Listener>();
  private nextSession = 0;
  private failure: Error | undefined;
  /** Requests awaiting a reply: the thread holds the process open only while > 0. */
  private inFlight = 0;

  newSession(listener: Listener): number {
    const id = this.nextSession++;
    this.listeners.set(id, listener);
    this.ensure();
    return id;
  }

  endSession(id: number): void {
    this.listeners.delete(id);
  }

  post(msg: ToEncoder): void {
    if (this.failure) throw this.failure;
    const w = this.ensure();
    if (this.inFlight++ === 0) w.ref();
    w.postMessage(msg);
  }

  private replied(): void {
    if (--this.inFlight === 0) this.worker?.unref();
  }

  private ensure(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(workerUrl());
    w.on('message', (msg: FromEncoder) => {
      this.replied();
      this.listeners.get(msg.session)?.(msg);
    });
    const fail = (err: Error): void => {
      this.failure = new RetrieverError('MODEL', `the encoder thread stopped: ${err.message}`);
      this.worker = undefined;
      this.inFlight = 0;
      for (const [session, l] of this.listeners) l({ type: 'open-error', session, message: this.failure.message });
    };
    w.on('error', fail);
    w.on('exit', (code) => {
      if (this.worker === w) fail(new Error(`exit code ${code}`));
    });
    // idle until post(): attaching listeners takes a reference, so drop it after them
    w.unref();
    this.worker = w;
    return w;
  }
}

export const encoderHost = new EncoderHost();

function workerUrl(): URL {
  return builtFileUrl('./encoder-worker.js', import.meta.url);
}

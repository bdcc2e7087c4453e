import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { RetrieverError } from '../errors.js';
import type { FromEncoder, ToEncoder } from './encoder-serve.js';
import { builtFileUrl } from '../util/built-file.js';

type Listener = (msg: FromEncoder) => void;

/** Where an encoder runs: the process's one encoder thread, or a process of its own. */
export type EncoderHostKind = 'thread' | 'process';

/** A started thread or child process, as the host drives it. */
interface Channel {
  post(msg: ToEncoder): void;
  ref(): void;
  unref(): void;
  /** Ends it at once (a process is killed; a thread cannot be, see encoder-child.ts). */
  kill(): void;
}

/**
 * The encoder of this process's queries (a thread) or of its build (a child
 * process), started on first use and shared by every encoder of its kind.
 * It never keeps the process alive by itself.
 */
class EncoderHost {
  private channel: Channel | undefined;
  private readonly listeners = new Map<number, Listener>();
  private nextSession = 0;
  private failure: Error | undefined;
  /** Requests awaiting a reply: the channel holds the process open only while > 0. */
  private inFlight = 0;

  constructor(readonly kind: EncoderHostKind) {}

  newSession(listener: Listener): number {
    const id = this.nextSession++;
    this.listeners.set(id, listener);
    return id;
  }

  endSession(id: number): void {
    this.listeners.delete(id);
  }

  post(msg: ToEncoder): void {
    if (this.failure) throw this.failure;
    const c = this.ensure();
    if (this.inFlight++ === 0) c.ref();
    c.post(msg);
  }

  /**
   * Ends a process host at once, whatever batch it is in: each session is
   * told `why` and dies. A later session starts a new process.
   */
  abandon(why: Error): void {
    const c = this.channel;
    if (!c) return;
    this.channel = undefined;
    this.inFlight = 0;
    c.kill();
    for (const [session, l] of [...this.listeners]) l({ type: 'open-error', session, message: why.message });
  }

  private replied(): void {
    if (--this.inFlight === 0) this.channel?.unref();
  }

  private ensure(): Channel {
    if (this.channel) return this.channel;
    const onMessage = (msg: FromEncoder): void => {
      // progress and a streamed batch come before a request's reply, not instead of it
      if (msg.type !== 'progress' && msg.type !== 'batch') this.replied();
      this.listeners.get(msg.session)?.(msg);
    };
    const fail = (err: Error): void => {
      if (this.channel !== channel) return; // abandoned on purpose, or already failed
      this.failure = new RetrieverError('MODEL', `the encoder ${this.kind} stopped: ${err.message}`);
      this.channel = undefined;
      this.inFlight = 0;
      for (const [session, l] of this.listeners) l({ type: 'open-error', session, message: this.failure.message });
    };
    // `fail` is only ever called later, by the channel's own events
    const channel = (this.kind === 'thread' ? startThread : startProcess)(onMessage, fail);
    // idle until post(): attaching listeners takes a reference, so drop it after them
    channel.unref();
    this.channel = channel;
    return channel;
  }
}

function startThread(onMessage: Listener, fail: (err: Error) => void): Channel {
  const w = new Worker(builtFileUrl('./encoder-worker.js', import.meta.url));
  w.on('message', onMessage);
  w.on('error', fail);
  w.on('exit', (code) => fail(new Error(`exit code ${code}`)));
  return {
    post: (msg) => w.postMessage(msg),
    ref: () => w.ref(),
    unref: () => w.unref(),
    kill: () => void w.terminate(),
  };
}

function startProcess(onMessage: Listener, fail: (err: Error) => void): Channel {
  // its stdout goes to our stderr: stdout belongs to MCP
  const child = fork(fileURLToPath(builtFileUrl('./encoder-child.js', import.meta.url)), [], {
    stdio: ['ignore', 2, 2, 'ipc'],
    serialization: 'advanced',
  });
  child.on('message', (m) => onMessage(m as FromEncoder));
  child.on('error', fail);
  child.on('exit', (code, signal) => fail(new Error(signal ? `killed by ${signal}` : `exit code ${code}`)));
  const ipc = (): { ref(): void; unref(): void } | undefined =>
    (child as unknown as { channel?: { ref(): void; unref(): void } }).channel;
  return {
    post: (msg) => void child.send(msg),
    ref: () => {
      child.ref();
      ipc()?.ref();
    },
    unref: () => {
      child.unref();
      ipc()?.unref();
    },
    kill: () => void child.kill('SIGKILL'),
  };
}

/** The query encoders' thread; each build has its encoder in a process (`buildEncoderHost`). */
export const encoderHost = new EncoderHost('thread');
/** The build encoders' process, abandoned at once when the build stops. */
export const buildEncoderHost = new EncoderHost('process');

export type { EncoderHost };

import { AsyncResource } from 'node:async_hooks';

/**
 * Runs synchronous search work one task per event-loop turn, first come
 * first served. Awaiting `setImmediate` in each request was not enough: all
 * requests that arrived in one poll phase queue their immediates together,
 * and Node runs that whole batch back to back, so 256 single-query clients
 * still held /health for ≈ 0.5 s. Here only one task is scheduled at a time,
 * and the loop polls for I/O (health checks, new requests, 503 refusals)
 * between any two tasks, so nothing waits behind more than one task.
 *
 * Two lanes: `run` for the steps of requests already started, `admit` for a
 * request's start (a server dispatches each request's handling through it).
 * A started request's next step goes first: under 256 clients a request
 * whose steps each waited behind every newcomer took a whole round of them
 * per step, and its latency grew with the number of clients times its steps,
 * while the ones waiting to start cost nothing but their place in line.
 */
export class TurnQueue {
  private readonly started = new Lane();
  private readonly waiting = new Lane();
  private scheduled = false;

  /** Runs `work` in its turn. It must return a plain value; wrap a promise it starts in an object. */
  run<T extends object | number | string | boolean | null | undefined>(work: () => T): Promise<T> {
    return this.enqueue(this.started, work);
  }

  /** `run` for the start of a new request: it waits until the steps of those started have had their turns. */
  admit<T extends object | number | string | boolean | null | undefined>(work: () => T): Promise<T> {
    return this.enqueue(this.waiting, work);
  }

  get length(): number {
    return this.started.length + this.waiting.length;
  }

  private enqueue<T>(lane: Lane, work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // the task runs in its submitter's async context, not in that of whoever scheduled the pump:
      // a request's answer lease is found there (answerLeases), and without it a request whose
      // start had queued behind another's ran unmetered (eight large answers aborted a 256 MB heap)
      lane.push(
        AsyncResource.bind(() => {
          try {
            resolve(work());
          } catch (err) {
            reject(err as Error);
          }
        }),
      );
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.length === 0) return;
    this.scheduled = true;
    setImmediate(this.pump);
  }

  private readonly pump = (): void => {
    this.scheduled = false;
    const task = this.started.length > 0 ? this.started.shift() : this.waiting.shift();
    task?.();
    this.schedule();
  };
}

/** A FIFO of tasks that drops each finished task's closure at once. */
class Lane {
  private tasks: Array<(() => void) | undefined> = [];
  private head = 0;

  get length(): number {
    return this.tasks.length - this.head;
  }

  push(task: () => void): void {
    this.tasks.push(task);
  }

  shift(): (() => void) | undefined {
    const task = this.tasks[this.head];
    // a finished task's closure holds its promise and so its result (a top-100 list of long passages
    // weighs megabytes): drop it now, not at the next compaction
    this.tasks[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.tasks.length) {
      this.tasks = this.tasks.slice(this.head);
      this.head = 0;
    }
    return task;
  }
}

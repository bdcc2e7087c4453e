/**
 * Runs synchronous search work one task per event-loop turn, first come
 * first served. Awaiting `setImmediate` in each request was not enough: all
 * requests that arrived in one poll phase queue their immediates together,
 * and Node runs that whole batch back to back, so 256 single-query clients
 * still held /health for ≈ 0.5 s. Here only one task is scheduled at a time,
 * and the loop polls for I/O (health checks, new requests, 503 refusals)
 * between any two tasks, so nothing waits behind more than one task.
 */
export class TurnQueue {
  private tasks: Array<(() => void) | undefined> = [];
  private head = 0;
  private scheduled = false;

  /** Runs `work` in its turn. It must return a plain value; wrap a promise it starts in an object. */
  run<T extends object | number | string | boolean | null | undefined>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.tasks.push(() => {
        try {
          resolve(work());
        } catch (err) {
          reject(err as Error);
        }
      });
      this.schedule();
    });
  }

  get waiting(): number {
    return this.tasks.length - this.head;
  }

  private schedule(): void {
    if (this.scheduled || this.waiting === 0) return;
    this.scheduled = true;
    setImmediate(this.pump);
  }

  private readonly pump = (): void => {
    this.scheduled = false;
    const task = this.tasks[this.head];
    // a finished task's closure holds its promise and so its result (a top-100 list of long passages
    // weighs megabytes): drop it now, not at the next compaction
    this.tasks[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.tasks.length) {
      this.tasks = this.tasks.slice(this.head);
      this.head = 0;
    }
    task?.();
    this.schedule();
  };
}

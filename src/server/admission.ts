import { RetrieverError } from '../errors.js';

export interface AdmissionOptions {
  /** Requests served at once; more are refused with OVERLOADED (HTTP 503 + Retry-After). */
  maxInFlight: number;
  /** Per-request deadline, ms; a request past it fails with DEADLINE (HTTP 504). */
  deadlineMs: number;
}

/**
 * Admission control: a bounded number of requests in flight, each with a
 * deadline, so overload is answered at once instead of piling up until
 * clients time out. `drain()` waits for the in-flight ones (graceful stop).
 */
export class Admission {
  private active = 0;
  private closed = false;
  private readonly idle: Array<() => void> = [];

  constructor(
    readonly opts: AdmissionOptions,
    private readonly onChange?: (inFlight: number) => void,
  ) {}

  get inFlight(): number {
    return this.active;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) throw new RetrieverError('OVERLOADED', 'the server is shutting down');
    if (this.active >= this.opts.maxInFlight) {
      throw new RetrieverError(
        'OVERLOADED',
        `the server is at its limit of ${this.opts.maxInFlight} requests in flight: retry shortly`,
      );
    }
    this.active++;
    this.onChange?.(this.active);
    let timer: NodeJS.Timeout | undefined;
    try {
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new RetrieverError('DEADLINE', `the request took longer than its ${this.opts.deadlineMs} ms deadline`),
            ),
          this.opts.deadlineMs,
        );
      });
      return await Promise.race([work(), deadline]);
    } finally {
      clearTimeout(timer);
      this.active--;
      this.onChange?.(this.active);
      if (this.active === 0) for (const w of this.idle.splice(0)) w();
    }
  }

  /** Refuses new work and resolves when nothing is in flight. */
  drain(): Promise<void> {
    this.closed = true;
    if (this.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }
}

/** Bytes an admitted answer holds until it has left the process. */
export interface Lease {
  /** Bytes held now: the estimate it was admitted with, or more once its passages were counted. */
  readonly bytes: number;
  /**
   * Counts `bytes` of the answer as its passages are read, and holds at least what was counted so
   * far: false, holding no more, when the budget has no room for it (the answer must be refused).
   */
  account(bytes: number): boolean;
  /** Gives the bytes back; a second call does nothing. */
  release(): void;
  /** The budget it is held from (what a refusal reports). */
  readonly budget: AnswerBudget;
}

/**
 * Admission by memory: the answers in flight, from the search that makes
 * them until their last byte is handed to the socket or pipe, hold at most
 * `limitBytes` between them. Counting requests let eight 256-query, top-100
 * answers (12 MB of JSON each, several times that as objects) exhaust a
 * 256 MB heap; an estimate made before the work starts is enough to refuse
 * the ninth. One answer is always admitted when none is in flight, so a
 * request larger than the budget still runs alone rather than never.
 */
export class AnswerBudget {
  private held = 0;
  /** The leases held, in the order they were admitted: the first is the eldest. */
  private readonly live = new Set<object>();

  constructor(readonly limitBytes: number) {}

  get heldBytes(): number {
    return this.held;
  }

  /**
   * A lease of `bytes`, or undefined when the answers in flight leave no room for it now. The
   * estimate admits; what the passages really weigh is then counted (`Lease.account`), so a
   * corpus whose average passage is small cannot let a hundred large ones through.
   */
  tryReserve(bytes: number): Lease | undefined {
    if (this.live.size > 0 && this.held + bytes > this.limitBytes) return undefined;
    this.held += bytes;
    const key = {};
    this.live.add(key);
    let released = false;
    let size = bytes;
    let counted = 0;
    return {
      budget: this,
      get bytes() {
        return size;
      },
      account: (more) => {
        if (released) return true;
        const want = counted + more;
        if (want > size && !this.mayGrow(key, want - size)) return false;
        counted = want;
        if (want > size) {
          this.held += want - size;
          size = want;
        }
        return true;
      },
      release: () => {
        if (released) return;
        released = true;
        this.held -= size;
        this.live.delete(key);
      },
    };
  }

  /**
   * Whether a lease may grow by `more` bytes: within the budget beside the others, or, for the
   * eldest lease, always. Every answer but the eldest is refused once the budget is spent, so
   * the eldest always finishes (refusing it too would leave answers larger than the budget
   * failing for ever as each retry met another); past the budget no new answer is admitted until
   * it has gone, and the others hold at most what they had when it crossed.
   */
  private mayGrow(key: object, more: number): boolean {
    if (this.held + more <= this.limitBytes) return true;
    return this.live.values().next().value === key;
  }
}

import { RetrieverError } from '../../errors.js';
import type { Retriever, RetrieverOptions } from '../../search/retriever.js';
import { formatDuration } from '../../util/progress.js';

/** Where a corpus stands before it can be searched. */
export interface CorpusState {
  name: string;
  state: 'building' | 'opening' | 'ready' | 'failed';
  /** What the build is doing now, e.g. "ingest multihop" or "embed multihop". */
  phase?: string;
  /** 0–100 within the phase. */
  percent?: number;
  eta_seconds?: number;
  error?: string;
}

/**
 * The retriever the tools serve, or the facts about why there is none yet.
 * A first run that must download and build answers MCP `initialize` and
 * `tools/list` at once: the server starts with an empty slot, the build runs
 * in the background, and `set` fills the slot when the corpora are open.
 * Until then `get` throws NOT_READY naming each corpus's phase, percent and
 * ETA, so a `search` is an error an agent can read, not a hang.
 */
export class RetrieverSlot {
  private retriever: Retriever | undefined;
  private failure: Error | undefined;
  private withdrawn = false;
  private partial = false;
  private generations = 0;
  private readonly states = new Map<string, CorpusState>();

  constructor(
    /** The options the retriever will have: the tools' limits and defaults are known before it opens. */
    readonly opts: RetrieverOptions,
    readonly names: readonly string[],
  ) {
    for (const name of names) this.states.set(name, { name, state: 'opening' });
  }

  /** A slot that is ready at once (indexes already built). */
  static of(retriever: Retriever): RetrieverSlot {
    const slot = new RetrieverSlot(
      retriever.opts,
      retriever.corpora.map((c) => c.name),
    );
    slot.set(retriever);
    return slot;
  }

  get ready(): boolean {
    return this.retriever !== undefined;
  }

  /**
   * Which set of fully built corpora serves, counted up at each publication (a folder's update);
   * undefined while none does, or while some still build (setPartial).
   */
  get generation(): number | undefined {
    return this.retriever && !this.partial ? this.generations : undefined;
  }

  /** The corpora failed to open, or were withdrawn after a damaged file was found. */
  get failed(): boolean {
    return this.failure !== undefined;
  }

  /** The retriever, or a NOT_READY error with each unready corpus's state. */
  get(): Retriever {
    if (this.retriever) return this.retriever;
    if (this.failure) {
      throw new RetrieverError(
        'NOT_READY',
        this.withdrawn
          ? `no longer serving: ${this.failure.message}`
          : `the corpora could not be opened: ${this.failure.message}`,
      );
    }
    const parts = this.list()
      .filter((s) => s.state !== 'ready')
      .map(describeState);
    throw new RetrieverError(
      'NOT_READY',
      `not ready yet: ${parts.join('; ')}. Try again later (list_corpora shows progress)`,
    );
  }

  current(): Retriever | undefined {
    return this.retriever;
  }

  /** The state of one corpus (building, with its phase, percent and ETA; or ready). */
  state(name: string): CorpusState | undefined {
    return this.states.get(name);
  }

  /**
   * Serves `retriever` while some of its corpora are still being built (their text phase is
   * published, their vectors are not): those keep the state their build reports.
   */
  setPartial(retriever: Retriever, building: ReadonlySet<string>): void {
    if (this.withdrawn) return;
    this.retriever = retriever;
    this.partial = true;
    for (const name of this.names) if (!building.has(name)) this.states.set(name, { name, state: 'ready' });
  }

  list(): CorpusState[] {
    return [...this.states.values()];
  }

  update(state: CorpusState): void {
    this.states.set(state.name, state);
  }

  set(retriever: Retriever): void {
    if (this.withdrawn) return; // a damaged file was found before the open finished
    this.retriever = retriever;
    this.partial = false;
    this.generations++;
    for (const name of this.names) this.states.set(name, { name, state: 'ready' });
  }

  /**
   * Stops serving after the corpora opened (a checksum found damaged while
   * serving): every later call gets `err`'s message, and /ready says not ready.
   */
  withdraw(err: Error): void {
    this.withdrawn = true;
    this.retriever = undefined;
    this.failure = err;
    for (const s of this.states.values())
      this.states.set(s.name, { name: s.name, state: 'failed', error: err.message });
  }

  fail(err: Error): void {
    this.failure = err;
    for (const s of this.states.values()) {
      if (s.state !== 'ready') this.states.set(s.name, { name: s.name, state: 'failed', error: err.message });
    }
  }
}

/** What a corpus whose text phase serves still waits for, from its build's state: "dense 43% embedded, about 6m00s left". */
export function describePending(s: CorpusState | undefined): string {
  if (!s || s.state !== 'building') return 'the dense arm is being published';
  const pct = s.percent !== undefined ? ` ${s.percent.toFixed(0)}%` : '';
  const eta = s.eta_seconds !== undefined ? `, about ${formatDuration(s.eta_seconds)} left` : '';
  return `dense${pct} (${s.phase ?? 'building'})${eta}`;
}

export function describeState(s: CorpusState): string {
  if (s.state === 'failed') return `corpus ${s.name} failed: ${s.error ?? 'unknown error'}`;
  if (s.state !== 'building') return `corpus ${s.name} is ${s.state}`;
  const pct = s.percent !== undefined ? ` ${s.percent.toFixed(0)}% done` : '';
  const eta = s.eta_seconds !== undefined ? `, about ${formatDuration(s.eta_seconds)} left` : '';
  return `corpus ${s.name} is building (first run)${s.phase ? `: ${s.phase}` : ''}${pct}${eta}`;
}

import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { TermEntry } from '../../store/chunk-store.js';
import type { Analyzer } from '../../text/analyzer.js';
import { forEachFileChunk } from '../../util/hash-file.js';
import type { FromWorker, MergedPart, ToWorker, WorkerInit } from './bm25-worker.js';
import { Inverter } from './inverter.js';
import { mergeRuns, splitTerms } from './merge.js';
import { FileWriter, type RunFile } from './run-files.js';
import { encodeLength } from './scoring.js';
import { builtFileUrl } from '../../util/built-file.js';

export interface Bm25BuildStats {
  /** Chunks with at least one indexed token (BM25's N). */
  docCount: number;
  /** All chunks, including empty ones (the norms file length). */
  chunkCount: number;
  totalTokens: number;
  terms: number;
  postings: number;
  postingsBytes: number;
  runs: number;
  /** Term ranges merged in parallel (1 = one merge). */
  mergeParts: number;
}

export interface Bm25BuilderOptions {
  /** Postings held in memory before a sorted run is spilled (encoded, a few bytes each), shared by all workers. */
  maxPostingsInMemory: number;
  /** Directory for spilled runs (inside the build's temp dir). */
  tempDir: string;
  /** Inversion worker threads; 0 inverts on the calling thread. */
  workers: number;
}

const BATCH_CHUNKS = 2048;
const MAX_IN_FLIGHT = 3; // batches queued per worker: bounds memory, keeps workers busy

interface WorkerHandle {
  worker: Worker;
  inFlight: number;
  wake: Array<() => void>;
  finished?: { runs: RunFile[]; postings: number };
  merged: Map<string, MergedPart>;
}

/** Each inversion thread's share of the postings budget (`workers` 0: the calling thread holds it all). */
export function postingsPerThread(maxPostingsInMemory: number, workers: number): number {
  return workers > 0 ? Math.max(10_000, Math.floor(maxPostingsInMemory / workers)) : maxPostingsInMemory;
}

/**
 * Builds the BM25 index: chunks are inverted on worker threads (or inline),
 * each spilling sorted runs under a shared memory budget, and finish() merges
 * everything into one postings file, the norms file and the term dictionary.
 * The files are byte-identical whatever the number of workers.
 */
export class Bm25Builder {
  private norms = new Uint8Array(1 << 16);
  private nextNum = 0;
  private docCount = 0;
  private totalTokens = 0;
  private inline: Inverter | undefined;
  private readonly workers: WorkerHandle[] = [];
  private batch: string[] = [];
  private batchStart = 0;
  private batches = 0;
  private failure: Error | undefined;

  constructor(
    private readonly analyzer: Analyzer,
    private readonly opts: Bm25BuilderOptions,
  ) {
    if (opts.workers <= 0) {
      this.inline = new Inverter(analyzer, opts.maxPostingsInMemory, opts.tempDir, 'bm25-inline');
      return;
    }
    const perWorker = postingsPerThread(opts.maxPostingsInMemory, opts.workers);
    for (let id = 0; id < opts.workers; id++) {
      const init: WorkerInit = { tempDir: opts.tempDir, maxPostings: perWorker, id };
      const handle: WorkerHandle = {
        worker: new Worker(workerUrl(), { workerData: init }),
        inFlight: 0,
        wake: [],
        merged: new Map(),
      };
      handle.worker.on('message', (msg: FromWorker) => this.onMessage(handle, msg));
      handle.worker.on('error', (err) => this.fail(err));
      handle.worker.on('exit', (code) => {
        if (code !== 0 && !handle.finished) this.fail(new Error(`BM25 worker ${id} exited with code ${code}`));
      });
      this.workers.push(handle);
    }
  }

  /**
   * Adds chunk `num` (0, 1, 2, … in order). Returns a promise only when the
   * caller must wait for a worker (backpressure); await it before the next add.
   */
  add(num: number, text: string): Promise<void> | undefined {
    if (num !== this.nextNum) throw new Error(`BM25 builder expected chunk ${this.nextNum}, got ${num}`);
    this.nextNum++;
    if (this.inline) {
      const n = this.inline.add(num, text);
      this.setNorm(num, n);
      return undefined;
    }
    if (this.batch.length === 0) this.batchStart = num;
    this.batch.push(text);
    if (this.batch.length >= BATCH_CHUNKS) return this.dispatch();
    return undefined;
  }

  /**
   * Writes the norms, the postings file and (through `writeTerms`, called once
   * per part, in term order) the term dictionary. With workers, each merges
   * one term range of all runs into a part file while this thread copies the
   * finished parts into place and writes their terms.
   *
   * `whileMerging`, when given, runs on this thread once the merges are under
   * way, before the first term is written (the build creates its id indexes
   * there, so they cost no wall time of their own).
   */
  async finish(
    postingsPath: string,
    normsPath: string,
    writeTerms: (entries: Iterable<TermEntry>) => void,
    whileMerging?: () => void,
  ): Promise<Bm25BuildStats> {
    let runs: RunFile[] = [];
    let postings = 0;
    let terms = 0;
    let mergeParts = 1;
    const out = new FileWriter(postingsPath);
    const counted = function* (entries: Iterable<TermEntry>): Generator<TermEntry> {
      for (const e of entries) {
        terms++;
        yield e;
      }
    };
    const partPaths: string[] = [];
    try {
      if (this.inline) {
        postings = this.inline.postings;
        writeFileSync(normsPath, this.norms.subarray(0, this.nextNum));
        whileMerging?.();
        // the postings still held go out as a last run (a build that never spilled has just this one,
        // whose records the merge copies as they are)
        this.inline.spill();
        runs = this.inline.runs;
        writeTerms(counted(mergeRuns(runs, out)));
      } else {
        if (this.batch.length > 0) await this.dispatch();
        const done = await Promise.all(this.workers.map((h) => this.finishWorker(h)));
        runs = done.flatMap((d) => d.runs);
        postings = done.reduce((s, d) => s + d.postings, 0);
        this.throwIfFailed();
        writeFileSync(normsPath, this.norms.subarray(0, this.nextNum));
        // two ranges per worker: this thread writes the first ranges' terms while the last merge
        const bounds = splitTerms(runs, 2 * this.workers.length);
        mergeParts = bounds.length + 1;
        const merges = [undefined, ...bounds].map((lo, i) => {
          const hi = bounds[i];
          const path = join(this.opts.tempDir, `bm25-part-${String(i).padStart(3, '0')}.postings`);
          partPaths.push(path);
          const msg: ToWorker = {
            type: 'merge',
            runs,
            out: path,
            ...(lo !== undefined ? { lo } : {}),
            ...(hi !== undefined ? { hi } : {}),
          };
          return this.mergeOn(this.workers[i % this.workers.length] as WorkerHandle, msg);
        });
        // a failed merge must not leave the others unobserved
        for (const m of merges) m.catch(() => undefined);
        whileMerging?.();
        for (const merge of merges) {
          const part = await merge;
          const base = out.offset;
          forEachFileChunk(part.path, (chunk) => out.write(chunk));
          writeTerms(counted(partEntries(part, base)));
        }
      }
    } finally {
      out.close();
      // stop the workers first: one still merging could create its part file after the removal
      await this.abort();
      for (const r of runs) rmSync(r.path, { force: true });
      for (const p of partPaths) rmSync(p, { force: true });
    }
    return {
      docCount: this.docCount,
      chunkCount: this.nextNum,
      totalTokens: this.totalTokens,
      terms,
      postings,
      postingsBytes: out.offset,
      runs: runs.length,
      mergeParts,
    };
  }

  /** Stops the workers (after a failure elsewhere in the build). */
  async abort(): Promise<void> {
    await Promise.all(this.workers.map((h) => h.worker.terminate()));
  }

  private setNorm(num: number, tokens: number): void {
    if (num >= this.norms.length) this.growNorms(num + 1);
    this.norms[num] = encodeLength(tokens);
    this.totalTokens += tokens;
    if (tokens > 0) this.docCount++;
  }

  private growNorms(min: number): void {
    let size = this.norms.length * 2;
    while (size < min) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.norms);
    this.norms = next;
  }

  private async dispatch(): Promise<void> {
    const handle = this.workers[this.batches++ % this.workers.length] as WorkerHandle;
    while (handle.inFlight >= MAX_IN_FLIGHT) {
      this.throwIfFailed();
      await new Promise<void>((resolve) => handle.wake.push(resolve));
    }
    this.throwIfFailed();
    const msg: ToWorker = { type: 'batch', start: this.batchStart, texts: this.batch };
    handle.inFlight++;
    handle.worker.postMessage(msg);
    this.batch = [];
  }

  private finishWorker(handle: WorkerHandle): Promise<{ runs: RunFile[]; postings: number }> {
    return this.ask(handle, { type: 'finish' }, () => handle.finished);
  }

  private mergeOn(handle: WorkerHandle, msg: ToWorker & { type: 'merge' }): Promise<MergedPart> {
    return this.ask(handle, msg, () => handle.merged.get(msg.out));
  }

  /** Posts `msg` and resolves with `answer()` once a reply sets it (rejects on any worker failure). */
  private ask<T>(handle: WorkerHandle, msg: ToWorker, answer: () => T | undefined): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const check = (): void => {
        const value = answer();
        if (this.failure) reject(this.failure);
        else if (value !== undefined) resolve(value);
        else handle.wake.push(check);
      };
      handle.worker.postMessage(msg);
      check();
    });
  }

  private onMessage(handle: WorkerHandle, msg: FromWorker): void {
    if (msg.type === 'batch-done') {
      handle.inFlight--;
      const end = msg.start + msg.norms.length;
      if (end > this.norms.length) this.growNorms(end);
      this.norms.set(msg.norms, msg.start);
      this.totalTokens += msg.tokens;
      this.docCount += msg.nonEmpty;
    } else if (msg.type === 'finished') {
      handle.finished = { runs: msg.runs, postings: msg.postings };
    } else if (msg.type === 'merged') {
      handle.merged.set(msg.path, msg);
    } else {
      this.fail(new Error(`BM25 worker failed: ${msg.message}`));
    }
    const wake = handle.wake.splice(0);
    for (const w of wake) w();
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const h of this.workers) for (const w of h.wake.splice(0)) w();
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }
}

/** A merged part's dictionary, its offsets moved to where the part starts in the postings file. */
function* partEntries(part: MergedPart, base: number): Generator<TermEntry> {
  for (let i = 0; i < part.terms.length; i++) {
    yield {
      term: part.terms[i] as string,
      df: part.df[i] as number,
      offset: base + (part.offsets[i] as number),
      nbytes: part.nbytes[i] as number,
    };
  }
}

/** The compiled worker file, also when this module runs from source under vitest. */
function workerUrl(): URL {
  return builtFileUrl('./bm25-worker.js', import.meta.url);
}

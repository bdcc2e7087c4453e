import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildLockHolder } from '../build/build-lock.js';
import { describeError, isRetrieverError, RetrieverError } from '../errors.js';
import { INDEX_FILES } from '../index/layout.js';
import { getPreset } from '../presets/presets.js';
import type { Retriever } from '../search/retriever.js';
import { Admission, AnswerBudget, type AdmissionOptions } from '../server/admission.js';
import { describePending, RetrieverSlot } from '../server/mcp/retriever-slot.js';
import type { TextPhaseReady } from '../build/build-index.js';
import type { PendingArms } from '../search/open-corpus.js';
import { withdrawOnDamage } from '../server/mcp/tool-context.js';
import { createServerMetrics, type ServerMetrics } from '../server/server-metrics.js';
import { watchProgress } from '../util/progress.js';
import { collectGarbage } from '../util/collect-garbage.js';
import { sleep } from '../util/sleep.js';
import type { McpHttpOptions } from '../server/transports/http/mcp-http.js';
import type { HttpOptions } from '../server/transports/http/router.js';
import { openLocalCorpus, openRetriever, type OpenedRetriever, type RetrieverSetup } from './open-retriever.js';
import { keepFoldersCurrent, type LiveFoldersOptions, type ServedFolder } from './live-folders.js';
import { folderChangedSince } from '../build/doc-reuse.js';
import { DEFAULT_FOLDER } from '../ingest/files/walk.js';

/** Requests a stdio client may have inside the server at once; more wait in its pipe. */
const STDIO_MAX_PENDING = 256;

export interface ServeConfig extends RetrieverSetup {
  maxBatchQueries: number;
  /** End search results with a `resource_link` per hit (`--resource-links`). */
  resourceLinks: boolean;
  transport: 'stdio' | 'http';
  /** Memory the answers in flight may hold between them, bytes (`--max-answer-mb`). */
  answerBudgetBytes: number;
  http: {
    host: string;
    port: number;
    options: HttpOptions;
    admission: AdmissionOptions;
    mcp: McpHttpOptions;
    drainMs: number;
  };
  /**
   * Builds a preset's missing index before serving (the first run), or
   * undefined to only explain which command builds it (--no-build). The
   * signal stops it when the server is asked to stop (stdin's end, a signal).
   */
  ensureCorpus:
    | ((name: string, signal: AbortSignal, onTextPhase?: (ready: TextPhaseReady) => Promise<void>) => Promise<void>)
    | undefined;
  /** Corpora served from folders (`--input`): built when missing, like presets, and kept current while `watch`. */
  folders: readonly ServedFolder[];
  /** Updates a served folder's corpus (a rebuild re-using what is unchanged); undefined: folders are not watched. */
  updateFolder: LiveFoldersOptions['update'] | undefined;
}

/** How long a retriever that was replaced stays open for the requests that still hold it: past any deadline. */
const RETIRE_GRACE_MS = 5 * 60_000;

/**
 * Serves the corpora over stdio or HTTP until a signal (or stdin's end).
 * Over HTTP the port opens first, so /health answers while a first-run
 * build and the index checks run.
 */
export async function serve(cfg: ServeConfig): Promise<void> {
  const metrics = createServerMetrics();
  const slot = new RetrieverSlot(cfg.retriever, cfg.corpora);
  const toBuild = missingPresets(cfg);
  // a first-run build stops with the server: the lock is released and the partial build kept for --resume
  const building = new AbortController();
  const stopBuilding = (why: string): void => {
    if (!building.signal.aborted)
      building.abort(new RetrieverError('STOPPED', `the server is stopping (${why}); the first-run build stopped`));
  };
  // a first build's text phase answers BM25 while its vectors are embedded: once every corpus
  // still building has one, a retriever over them (and the corpora already built) serves meanwhile
  const textPhases = new Map<string, TextPhaseReady>();
  let early: Retriever | undefined;
  const serveTextPhase = async (name: string, ready: TextPhaseReady): Promise<void> => {
    textPhases.set(name, ready);
    if (toBuild.some((n) => !textPhases.has(n) && !isBuilt(cfg, n))) return;
    const pending = (n: string): PendingArms => ({
      modes: ['hybrid', 'dense'],
      status: () => describePending(slot.state(n)),
    });
    const opened = await openRetriever({
      ...withEncoderMetrics(cfg, metrics),
      verifyInBackground: true,
      textPhases: new Map([...textPhases].map(([n, t]) => [n, { ...t, pending: pending(n) }])),
    });
    const previous = early;
    early = observed(opened, metrics);
    slot.setPartial(early, new Set(textPhases.keys()));
    if (previous) retire(previous);
    cfg.log.info(`BM25 answers now; hybrid and dense join once the vectors are published (/ready?mode=bm25 says 200)`);
  };
  const open = async (): Promise<Retriever> => {
    if (toBuild.length > 0) {
      await buildWithProgress(cfg, toBuild, slot, building.signal, serveTextPhase, (name) => textPhases.delete(name));
    }
    for (const name of cfg.corpora) if (!early) slot.update({ name, state: 'opening' });
    const opened = await openRetriever({ ...withEncoderMetrics(cfg, metrics), verifyInBackground: true });
    if (early) retire(early);
    early = undefined;
    // the bytes not checked before serving are hashed meanwhile; a damaged file stops the answers
    opened.integrity.then(
      () => cfg.log.debug('every index checksum checked'),
      (err: Error) => {
        cfg.log.error(`${describeError(err)}; no longer answering searches`);
        slot.withdraw(err);
      },
    );
    // what opening (and a first run's build) left: the process idles at its steady size from ready on
    collectGarbage();
    return observed(opened, metrics);
  };
  // served folders stay current once everything is open (live-folders.ts)
  let live: { close(): Promise<void> } | undefined;
  const startLive = (): void => {
    if (cfg.folders.length === 0 || !cfg.updateFolder || live || building.signal.aborted) return;
    const setup = { ...withEncoderMetrics(cfg, metrics), verifyInBackground: true };
    live = keepFoldersCurrent({
      folders: cfg.folders,
      indexDir: cfg.indexDir,
      slot,
      update: cfg.updateFolder,
      open: (name) => openLocalCorpus(setup, name),
      retire: (c) => setTimeout(() => c.close(), RETIRE_GRACE_MS).unref(),
      changedSinceBuild: (f) => folderChangedSince(join(cfg.indexDir, f.name), f.path, DEFAULT_FOLDER),
      log: cfg.log,
    });
  };
  const stopAll = async (why: string): Promise<void> => {
    stopBuilding(why);
    await live?.close();
  };
  if (cfg.transport === 'stdio') {
    let opening: Promise<void> = Promise.resolve();
    // nothing to build: open first, so a missing or damaged index stops the process with its message
    if (toBuild.length === 0) {
      slot.set(await open());
      startLive();
    }
    const { serveStdio } = await import('../server/transports/stdio/serve-stdio.js');
    const admission = new Admission(cfg.http.admission);
    // stdio has one client: it is slowed by backpressure (requests held in the transport), never refused
    const maxPending = Math.min(STDIO_MAX_PENDING, cfg.http.admission.maxInFlight);
    // a first run answers initialize and tools/list at once and builds in the background, started
    // once the "serving" line is out, so that a fast failure is told after it, not before
    const buildInBackground = (): void => {
      if (toBuild.length === 0) return;
      opening = open().then(
        (r) => {
          slot.set(r);
          startLive();
        },
        (err: Error) => {
          slot.fail(err);
          if (isRetrieverError(err, 'STOPPED')) return cfg.log.info(describeError(err));
          cfg.log.error(`first-run build failed: ${describeError(err)}`);
          // a terminal user sees a process that stays up: say why, and what to do
          cfg.log.error(
            'still serving over stdio, but every search answers with this error: fix the cause and start again ' +
              '(close stdin or press Ctrl-C to stop)',
          );
        },
      );
    };
    await serveStdio(
      slot,
      { maxBatchQueries: cfg.maxBatchQueries, resourceLinks: cfg.resourceLinks },
      withdrawOnDamage(slot, cfg.log, (work) => admission.run(work)),
      cfg.log,
      { maxPending, answers: new AnswerBudget(cfg.answerBudgetBytes) },
      async (why) => {
        await stopAll(why);
        await opening;
      },
      buildInBackground,
    );
    return;
  }
  const { serveHttp } = await import('../server/transports/http/serve-http.js');
  await serveHttp({
    host: cfg.http.host,
    port: cfg.http.port,
    http: cfg.http.options,
    admission: cfg.http.admission,
    answers: new AnswerBudget(cfg.answerBudgetBytes),
    mcp: cfg.http.mcp,
    maxBatchQueries: cfg.maxBatchQueries,
    resourceLinks: cfg.resourceLinks,
    metrics,
    log: cfg.log,
    drainMs: cfg.http.drainMs,
    slot,
    load: open,
    stopLoad: stopAll,
    onReady: startLive,
  });
}

/**
 * The presets whose index a first run must build. A missing preset with
 * --no-build is an error naming the command; a missing non-preset index is
 * left to openCorpus, which explains how to build it.
 */
function missingPresets(cfg: ServeConfig): string[] {
  const out: string[] = [];
  // an engine's corpora are pushed with build-index --backend, never built on first run
  if (cfg.backend) return out;
  for (const name of cfg.corpora) {
    if (existsSync(join(cfg.indexDir, name, INDEX_FILES.manifest))) continue;
    if (!getPreset(name) && !cfg.folders.some((f) => f.name === name)) continue;
    if (!cfg.ensureCorpus) {
      throw new RetrieverError(
        'INDEX_MISSING',
        `corpus ${name} is not built yet: run \`${buildCommand(cfg, name)}\`, or start without --no-build to build it now`,
      );
    }
    out.push(name);
  }
  return out;
}

function isBuilt(cfg: ServeConfig, name: string): boolean {
  return existsSync(join(cfg.indexDir, name, INDEX_FILES.manifest));
}

/** Closes a replaced retriever once the requests that still hold it are done (past any deadline). */
function retire(r: Retriever): void {
  setTimeout(() => void r.close(), RETIRE_GRACE_MS).unref();
}

function buildCommand(cfg: ServeConfig, name: string): string {
  return `retriever-mcp build --corpus ${name}${cfg.indexDir !== 'indexes' ? ` --index-dir ${cfg.indexDir}` : ''}`;
}

/**
 * Builds the first run's presets one after another, reporting each progress
 * bar's state into the slot. A preset another process is building (a second
 * server started on the same --index-dir) is waited for, then opened.
 */
async function buildWithProgress(
  cfg: ServeConfig,
  names: string[],
  slot: RetrieverSlot,
  signal: AbortSignal,
  onTextPhase: (name: string, ready: TextPhaseReady) => Promise<void>,
  onBuilt: (name: string) => void,
): Promise<void> {
  const ensure = cfg.ensureCorpus as NonNullable<ServeConfig['ensureCorpus']>;
  for (const name of names) slot.update({ name, state: 'building', phase: 'starting' });
  for (const name of names) {
    if (await waitForOtherBuild(cfg, name, slot, signal)) continue;
    cfg.log.info(`corpus ${name} is not built yet: building it now (${buildCommand(cfg, name)}); this runs once`);
    const stop = watchProgress((e) =>
      slot.update({
        name,
        state: 'building',
        phase: e.label,
        ...(e.total ? { percent: Math.min(100, (100 * e.done) / e.total) } : {}),
        ...(e.etaSeconds !== undefined ? { eta_seconds: Math.round(e.etaSeconds) } : {}),
      }),
    );
    try {
      await ensure(name, signal, (ready) => onTextPhase(name, ready));
      onBuilt(name);
    } catch (err) {
      // another process took the lock between the wait and this build: wait for it instead
      if (!isRetrieverError(err, 'LOCKED')) throw err;
      if (!(await waitForOtherBuild(cfg, name, slot, signal))) throw err;
    } finally {
      stop();
    }
    slot.update({ name, state: 'opening' });
  }
}

/**
 * While another process holds NAME's build lock, waits (polling once a
 * second, stoppable), with the wait shown in list_corpora. Returns whether
 * an index is there to open (that build's, or one finished meanwhile).
 */
async function waitForOtherBuild(
  cfg: ServeConfig,
  name: string,
  slot: RetrieverSlot,
  signal: AbortSignal,
): Promise<boolean> {
  const built = (): boolean => existsSync(join(cfg.indexDir, name, INDEX_FILES.manifest));
  let holder = buildLockHolder(cfg.indexDir, name);
  // built by another process meanwhile (while this one waited for the same download, say)
  if (!holder) return built();
  cfg.log.info(`corpus ${name} is being built by another process (pid ${holder.pid}); waiting for it to finish`);
  while (holder) {
    slot.update({ name, state: 'building', phase: `waiting for the build by pid ${holder.pid}` });
    await sleep(1000, signal);
    holder = buildLockHolder(cfg.indexDir, name);
  }
  if (!built()) {
    cfg.log.warn(`the other build of ${name} ended without an index; building it here`);
    return false;
  }
  return true;
}

function withEncoderMetrics(cfg: RetrieverSetup, metrics: ServerMetrics): RetrieverSetup {
  return {
    ...cfg,
    onEncoderBatch: (n) => metrics.encoderBatch.observe(n),
    onEncoderQueue: (d) => metrics.encoderQueue.set(d),
    onStage: (stage, seconds) => metrics.stage.observe(seconds, { stage }),
  };
}

/** Points the cache metrics at the opened retriever's caches; returns the retriever. */
function observed({ retriever, batchers }: OpenedRetriever, metrics: ServerMetrics): Retriever {
  metrics.cacheHits.source = () => retriever.cache.hits;
  metrics.cacheMisses.source = () => retriever.cache.misses;
  type Sized = { readonly size: number; readonly bytes: number };
  const caches = (): Array<[string, Sized]> => [
    ['results', retriever.cache],
    ...batchers.map((b): [string, Sized] => ['vectors', b.vectorCache]),
    ...retriever.corpora.flatMap((c): Array<[string, Sized]> => (c.kind === 'local' ? [['filters', c.filters]] : [])),
  ];
  const sum = (pick: (c: Sized) => number) => () => {
    const byName = new Map<string, number>();
    for (const [name, c] of caches()) byName.set(name, (byName.get(name) ?? 0) + pick(c));
    return [...byName].map(([cache, v]): [{ cache: string }, number] => [{ cache }, v]);
  };
  metrics.cacheBytes.collect = sum((c) => c.bytes);
  metrics.cacheEntries.collect = sum((c) => c.size);
  return retriever;
}

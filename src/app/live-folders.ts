import { resolve, sep } from 'node:path';
import type { TextPhaseReady } from '../build/build-index.js';
import { describeError, isRetrieverError } from '../errors.js';
import { watchFolder, type FolderWatch } from '../ingest/files/watch-folder.js';
import { openTextPhase, type OpenCorpus } from '../search/open-corpus.js';
import type { Retriever } from '../search/retriever.js';
import type { ServedCorpus } from '../search/served-corpus.js';
import type { RetrieverSlot } from '../server/mcp/retriever-slot.js';
import type { Logger } from '../util/log.js';
import { formatDuration } from '../util/progress.js';

/** A folder served as a corpus (`retriever-mcp --input DIR`). */
export interface ServedFolder {
  name: string;
  path: string;
}

export interface LiveFoldersOptions {
  folders: readonly ServedFolder[];
  indexDir: string;
  slot: RetrieverSlot;
  /** Builds the folder's corpus again, re-using unchanged files and vectors, and publishes it (build-index's atomic swap). */
  update: (
    folder: ServedFolder,
    signal: AbortSignal,
    onTextPhase: (ready: TextPhaseReady) => Promise<void>,
  ) => Promise<void>;
  /** Opens the corpus just published, as the server opens one. */
  open: (name: string) => OpenCorpus;
  log: Logger;
  /** A burst of changes is built once it has been quiet this long (ms). */
  quietMs?: number;
  /** …or once its first change is this old (ms). */
  maxWaitMs?: number;
  /** Closes a corpus that was replaced, once the requests that hold it are done. */
  retire: (corpus: OpenCorpus) => void;
  /** Hears each update published (tests, metrics). */
  onPublished?: (name: string, seconds: number) => void;
  /** Whether the folder differs from what its index was built from (the catch-up at start). */
  changedSinceBuild: (folder: ServedFolder) => boolean;
}

/** How long an update that failed because another build held the lock waits before it tries again. */
const RETRY_MS = 5_000;

/**
 * Keeps served folders current: each folder is watched (watch-folder.ts), and a burst of
 * changes becomes one update, built as a rebuild that reads only new and changed files and embeds
 * only new text (doc-reuse.ts, vector-reuse.ts), then published with the same atomic swap as any
 * build. While the update embeds, its text phase answers BM25 and the build it replaces answers
 * dense and hybrid; once it is published, the whole corpus is swapped in one step. A search sees
 * one published state, a crash mid-update leaves the last one in place (the next start catches
 * up), and changes that arrive during an update make one more update after it.
 *
 * Starts with a catch-up update of each folder: files may have changed while nothing served.
 */
export function keepFoldersCurrent(o: LiveFoldersOptions): { close(): Promise<void> } {
  const stop = new AbortController();
  const watches: FolderWatch[] = [];
  const inFlight = new Set<Promise<void>>();
  for (const folder of o.folders) {
    let running: Promise<void> | undefined;
    let again = false;
    let changed = 0;
    const run = async (): Promise<void> => {
      const files = changed;
      changed = 0;
      const t0 = performance.now();
      o.log.info(`${folder.name}: updating ${files > 0 ? `${files} changed paths` : 'the folder as it is now'}`);
      const corpusOf = (r: Retriever | undefined): ServedCorpus | undefined =>
        r?.corpora.find((c) => c.name === folder.name);
      let ahead: OpenCorpus | undefined;
      try {
        await o.update(folder, stop.signal, async ({ dir, manifest }) => {
          const current = o.slot.current();
          const behind = corpusOf(current);
          if (!current || behind?.kind !== 'local' || behind.pending) return;
          ahead = openTextPhase(dir, folder.name, manifest, { behind: behind.behind ?? behind });
          o.slot.set(current.replacing(ahead));
        });
        const current = o.slot.current();
        const old = corpusOf(current);
        const next = o.open(folder.name);
        if (!current) {
          next.close();
          return;
        }
        o.slot.set(current.replacing(next));
        if (old?.kind === 'local') {
          if (old.behind) o.retire(old.behind);
          o.retire(old);
        }
        const s = (performance.now() - t0) / 1000;
        o.log.info(
          `${folder.name}: ${files > 0 ? `${files} changed paths` : 'the folder as it is now'} published in ${formatDuration(s)}`,
        );
        o.onPublished?.(folder.name, s);
      } catch (err) {
        if (stop.signal.aborted) return;
        // the text phase answered meanwhile: the build it replaced serves again whole
        const current = o.slot.current();
        const now = corpusOf(current);
        if (ahead && current && now === ahead && ahead.behind) {
          o.slot.set(current.replacing(ahead.behind));
          o.retire(ahead);
        }
        if (isRetrieverError(err, 'LOCKED')) {
          o.log.info(`${folder.name}: another build holds the index; updating again in ${RETRY_MS / 1000} s`);
          setTimeout(schedule, RETRY_MS).unref();
          return;
        }
        o.log.warn(`${folder.name}: the update failed (${describeError(err)}); the last published state still serves`);
      }
    };
    const schedule = (): void => {
      if (stop.signal.aborted) return;
      if (running) {
        again = true;
        return;
      }
      const p = run();
      inFlight.add(p);
      running = p.finally(() => {
        inFlight.delete(p);
        running = undefined;
        if (again) {
          again = false;
          schedule();
        }
      });
    };
    const indexDir = resolve(o.indexDir) + sep;
    const w = watchFolder(folder.path, {
      // an index kept inside the folder must not trigger its own updates
      ignore: (p) => `${resolve(p)}${sep}`.startsWith(indexDir),
      quietMs: o.quietMs ?? 300,
      maxWaitMs: o.maxWaitMs ?? 2_000,
      onChanges: (paths) => {
        changed += paths.length;
        o.log.debug(
          `${folder.name}: ${paths.length} paths changed (${paths.slice(0, 3).join(', ')}${paths.length > 3 ? ', …' : ''})`,
        );
        schedule();
      },
      onError: (err) =>
        o.log.warn(`${folder.name}: watching ${folder.path} failed (${err.message}); edits may need a restart to show`),
    });
    watches.push(w);
    // what changed while nothing served: once the watch is set, so that nothing falls between
    void w.ready.then(() => {
      let changedMeanwhile = true;
      try {
        changedMeanwhile = o.changedSinceBuild(folder);
      } catch (err) {
        o.log.debug(`${folder.name}: cannot compare the folder with its index (${describeError(err)}): updating`);
      }
      if (changedMeanwhile) schedule();
    });
  }
  return {
    close: async () => {
      stop.abort();
      await Promise.all(watches.map((w) => w.close()));
      // a stopped update releases its build lock before the process goes
      await Promise.all([...inFlight].map((p) => p.catch(() => undefined)));
    },
  };
}

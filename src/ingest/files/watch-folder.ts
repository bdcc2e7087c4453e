import { watch, type FSWatcher } from 'chokidar';
import { basename, relative, sep } from 'node:path';
import { SKIPPED_DIR_NAMES } from './walk.js';

/** The only importer of chokidar: a folder's changes, coalesced into bursts. */
export interface FolderWatch {
  /** Settles once the folder's directories are all watched. */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

export interface WatchOptions {
  /** Paths never to report (an index directory inside the folder, say); hidden and skipped directories never are. */
  ignore?: (absPath: string) => boolean;
  /** A burst of changes is reported once it has been quiet this long (ms). */
  quietMs: number;
  /** …or once its first change is this old, however busy the folder still is (ms). */
  maxWaitMs: number;
  /** The paths (relative to the folder) that were added, changed or removed in one burst. */
  onChanges: (paths: string[]) => void;
  onError: (err: Error) => void;
}

/**
 * Watches a folder the way a folder corpus reads it: every file below it, without following
 * symlinks, hidden names and the directories the walk skips left out. A `git checkout` that
 * touches a thousand files is one report: changes are gathered until the folder is quiet for
 * `quietMs`, or for at most `maxWaitMs`. chokidar watches each directory with fs.watch (inotify
 * on Linux) and handles editors' atomic saves (a write to a temporary file, then a rename).
 */
export function watchFolder(root: string, opts: WatchOptions): FolderWatch {
  const watcher: FSWatcher = watch(root, {
    ignoreInitial: true,
    followSymlinks: false,
    atomic: true,
    ignorePermissionErrors: true,
    ignored: (path: string) => {
      if (path === root) return false;
      const name = basename(path);
      return name.startsWith('.') || SKIPPED_DIR_NAMES.has(name) || (opts.ignore?.(path) ?? false);
    },
  });
  let burst = new Set<string>();
  let quiet: NodeJS.Timeout | undefined;
  let oldest: NodeJS.Timeout | undefined;
  const flush = (): void => {
    clearTimeout(quiet);
    clearTimeout(oldest);
    quiet = oldest = undefined;
    if (burst.size === 0) return;
    const paths = [...burst].sort();
    burst = new Set();
    opts.onChanges(paths);
  };
  const heard = (path: string): void => {
    burst.add(relative(root, path).split(sep).join('/'));
    clearTimeout(quiet);
    quiet = setTimeout(flush, opts.quietMs);
    oldest ??= setTimeout(flush, opts.maxWaitMs);
  };
  for (const event of ['add', 'change', 'unlink', 'addDir', 'unlinkDir'] as const) watcher.on(event, heard);
  watcher.on('error', (err) => opts.onError(err instanceof Error ? err : new Error(String(err))));
  const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return {
    ready,
    close: async () => {
      clearTimeout(quiet);
      clearTimeout(oldest);
      await watcher.close();
    },
  };
}

import { parentPort, workerData } from 'node:worker_threads';
import { RetrieverError } from '../errors.js';
import { verifyFiles } from './file-integrity.js';
import type { FileRecord } from './manifest.js';

/** verifyFilesInBackground's thread: every block but each file's first and last, then one message with the outcome. */
const { dir, files, fixHint, fds } = workerData as {
  dir: string;
  files: Record<string, FileRecord>;
  fixHint: string;
  /** Descriptors the main thread opened with the served files (a process's descriptors are every thread's). */
  fds: Record<string, number>;
};
try {
  verifyFiles(dir, files, 'inner', fixHint, 8, fds);
  parentPort?.postMessage({ ok: true });
} catch (err) {
  const code = err instanceof RetrieverError ? err.code : 'IO';
  parentPort?.postMessage({ ok: false, code, message: (err as Error).message });
}

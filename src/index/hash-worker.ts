import { parentPort, workerData } from 'node:worker_threads';
import { wholeFileHash } from './file-integrity.js';

/** fingerprintFiles' second thread: the whole-file hashes, while the thread that started it hashes the blocks. */
const { paths } = workerData as { paths: string[] };
parentPort?.postMessage(paths.map((path) => wholeFileHash(path)));

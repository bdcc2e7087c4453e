import { parentPort } from 'node:worker_threads';
import { serveEncoder } from './encoder-serve.js';

/**
 * The process's encoder thread. ONNX Runtime's Node binding runs inference
 * synchronously and cannot be loaded again in a second thread of the same
 * process, so one long-lived thread hosts every query encoder session and
 * serves requests one at a time, in arrival order; the server's event loop
 * stays free. (A build's encoder runs in a process of its own instead:
 * encoder-child.ts.)
 */
const port = parentPort;
if (port) serveEncoder({ onMessage: (l) => port.on('message', l), post: (m, t) => port.postMessage(m, t) });

import { parentPort, workerData } from 'node:worker_threads';
import { createEnglishAnalyzer } from '../../text/analyzer.js';
import { Inverter } from './inverter.js';
import { encodeLength } from './scoring.js';

/**
 * A BM25 inversion worker: receives batches of consecutive chunks, returns
 * their length norms, keeps their postings, spills sorted runs, and on
 * `finish` reports its run files for the coordinator to merge.
 */
export interface WorkerInit {
  tempDir: string;
  maxPostings: number;
  id: number;
}

export type ToWorker = { type: 'batch'; start: number; texts: string[] } | { type: 'finish' };

export type FromWorker =
  | { type: 'batch-done'; start: number; norms: Uint8Array; tokens: number; nonEmpty: number }
  | { type: 'finished'; runs: string[]; postings: number }
  | { type: 'error'; message: string };

const port = parentPort;
if (port) {
  const init = workerData as WorkerInit;
  const inverter = new Inverter(createEnglishAnalyzer(), init.maxPostings, init.tempDir, `bm25-w${init.id}`);
  port.on('message', (msg: ToWorker) => {
    try {
      if (msg.type === 'batch') {
        const norms = new Uint8Array(msg.texts.length);
        let tokens = 0;
        let nonEmpty = 0;
        msg.texts.forEach((text, i) => {
          const n = inverter.add(msg.start + i, text);
          norms[i] = encodeLength(n);
          tokens += n;
          if (n > 0) nonEmpty++;
        });
        const reply: FromWorker = { type: 'batch-done', start: msg.start, norms, tokens, nonEmpty };
        port.postMessage(reply, [norms.buffer]);
      } else {
        inverter.spill();
        const reply: FromWorker = { type: 'finished', runs: inverter.runPaths, postings: inverter.postings };
        port.postMessage(reply);
      }
    } catch (err) {
      const reply: FromWorker = { type: 'error', message: (err as Error).message };
      port.postMessage(reply);
    }
  });
}

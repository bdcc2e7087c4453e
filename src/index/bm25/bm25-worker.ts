import { parentPort, workerData } from 'node:worker_threads';
import { createEnglishAnalyzer } from '../../text/analyzer.js';
import { Inverter } from './inverter.js';
import { mergeRuns } from './merge.js';
import { FileWriter, type RunFile } from './run-files.js';
import { encodeLength } from './scoring.js';

/**
 * A BM25 inversion worker: receives batches of consecutive chunks, returns
 * their length norms, keeps their postings, spills sorted runs, and on
 * `finish` reports its run files. Then it may merge one term range of every
 * worker's runs into a part of the postings file (`merge`), returning that
 * part's term dictionary.
 */
export interface WorkerInit {
  tempDir: string;
  maxPostings: number;
  id: number;
}

export type ToWorker =
  | { type: 'batch'; start: number; texts: string[] }
  | { type: 'finish' }
  | { type: 'merge'; runs: RunFile[]; lo?: string; hi?: string; out: string };

/** One merged term range: the part file's dictionary (offsets within the part) and its size. */
export interface MergedPart {
  path: string;
  terms: string[];
  df: Uint32Array;
  offsets: Float64Array;
  nbytes: Uint32Array;
  bytes: number;
}

export type FromWorker =
  | { type: 'batch-done'; start: number; norms: Uint8Array; tokens: number; nonEmpty: number }
  | { type: 'finished'; runs: RunFile[]; postings: number }
  | ({ type: 'merged' } & MergedPart)
  | { type: 'error'; message: string };

const port = parentPort;
if (port) {
  const init = workerData as WorkerInit;
  const inverter = new Inverter(createEnglishAnalyzer(), init.maxPostings, init.tempDir, `bm25-w${init.id}`);
  let counts = new Uint32Array(2048);
  port.on('message', (msg: ToWorker) => {
    try {
      if (msg.type === 'batch') {
        const n = msg.texts.length;
        if (counts.length < n) counts = new Uint32Array(n);
        inverter.addBatch(msg.start, msg.texts, counts);
        const norms = new Uint8Array(n);
        let tokens = 0;
        let nonEmpty = 0;
        for (let i = 0; i < n; i++) {
          const c = counts[i] as number;
          norms[i] = encodeLength(c);
          tokens += c;
          if (c > 0) nonEmpty++;
        }
        const reply: FromWorker = { type: 'batch-done', start: msg.start, norms, tokens, nonEmpty };
        port.postMessage(reply, [norms.buffer]);
      } else if (msg.type === 'finish') {
        inverter.spill();
        const reply: FromWorker = { type: 'finished', runs: inverter.runs, postings: inverter.postings };
        port.postMessage(reply);
      } else {
        const part = mergePart(msg.runs, msg.lo, msg.hi, msg.out);
        const reply: FromWorker = { type: 'merged', ...part };
        port.postMessage(reply, [part.df.buffer, part.offsets.buffer, part.nbytes.buffer] as ArrayBuffer[]);
      }
    } catch (err) {
      const reply: FromWorker = { type: 'error', message: (err as Error).message };
      port.postMessage(reply);
    }
  });
}

function mergePart(runs: RunFile[], lo: string | undefined, hi: string | undefined, path: string): MergedPart {
  const out = new FileWriter(path);
  const terms: string[] = [];
  let df = new Uint32Array(1 << 16);
  let offsets = new Float64Array(1 << 16);
  let nbytes = new Uint32Array(1 << 16);
  try {
    const range = { ...(lo !== undefined ? { lo } : {}), ...(hi !== undefined ? { hi } : {}) };
    for (const e of mergeRuns(runs, out, range)) {
      const i = terms.length;
      if (i === df.length) {
        df = grown(df, new Uint32Array(i * 2));
        offsets = grown(offsets, new Float64Array(i * 2));
        nbytes = grown(nbytes, new Uint32Array(i * 2));
      }
      terms.push(e.term);
      df[i] = e.df;
      offsets[i] = e.offset;
      nbytes[i] = e.nbytes;
    }
  } finally {
    out.close();
  }
  const n = terms.length;
  return {
    path,
    terms,
    df: df.slice(0, n),
    offsets: offsets.slice(0, n),
    nbytes: nbytes.slice(0, n),
    bytes: out.offset,
  };
}

function grown<T extends Uint32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

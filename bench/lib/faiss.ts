import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { lastJsonLine, runCommand } from './child.js';
import { ROOT } from './common.js';

/**
 * The faiss the peers run: PyPI's faiss-cpu wheel (it loads its AVX2 or
 * AVX-512 build as the CPU allows), at the version DeepSearch-RL pins
 * (`faiss-gpu-cu12==1.12.0`), in an ignored venv of its own.
 */
export const FAISS_CPU = 'faiss-cpu==1.12.0';
const VENV = join(ROOT, 'bench', '.venv-faiss');

/** bench/.venv-faiss's python, created with faiss-cpu from PyPI on first use. */
export function faissPython(log: (line: string) => void = () => {}): string {
  const py = join(VENV, 'bin', 'python');
  if (!existsSync(py)) {
    log(`creating ${VENV} (${FAISS_CPU} from PyPI)`);
    execFileSync('python3', ['-m', 'venv', VENV], { stdio: ['ignore', 2, 2] });
  }
  try {
    execFileSync(py, ['-c', 'import faiss, numpy'], { stdio: 'ignore' });
  } catch {
    execFileSync(py, ['-m', 'pip', 'install', '-q', FAISS_CPU], { stdio: ['ignore', 2, 2] });
  }
  return py;
}

/** What a faiss peer (bench/peers/ann_peer.py --engine faiss-factory) runs on: an .fbin base, f32 queries, exact truth. */
export interface FaissFiles {
  vectors: string;
  queries: string;
  truth: string;
  index: string;
  dim: number;
}

export interface FaissRun {
  /** an index_factory string, built as FlashRAG's and Search-R1's builders do */
  factory: string;
  /** faiss ParameterSpace settings to serve at, e.g. ['efSearch=16', 'efSearch=64'] */
  params: string[];
  /** queries per search call: 1 runs on one thread, more on `threads` */
  batch: number;
  threads: number;
}

/**
 * One phase of a faiss index (`build` trains on every vector, as the peers' builders do, and fills it;
 * `serve` measures recall and speed at each setting); returns the JSON line
 * the peer prints, and the run's wall time and peak RSS.
 */
export function runFaiss(
  py: string,
  phase: 'build' | 'serve',
  f: FaissFiles,
  run: FaissRun,
): { json: Record<string, unknown>; wallS: number; maxRssMiB?: number } {
  const r = runCommand(py, [
    join(ROOT, 'bench/peers/ann_peer.py'),
    ...['--engine', 'faiss-factory', '--factory', run.factory, '--params', run.params.join('|')],
    ...['--phase', phase, '--base', f.vectors, '--offset', '8'], // 8: the .fbin header
    ...['--queries', f.queries, '--truth', f.truth, '--index', f.index, '--dim', String(f.dim)],
    ...['--batch', String(run.batch), '--threads', String(run.threads), '--train', '0'],
  ]);
  const json = lastJsonLine(r.stdout);
  return { json, wallS: r.wallS, ...(r.maxRssMiB !== undefined ? { maxRssMiB: r.maxRssMiB } : {}) };
}

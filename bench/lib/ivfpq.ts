import { join } from 'node:path';
import { lastJsonLine, runCommand } from './child.js';
import { ROOT } from './common.js';

/** What faiss IVF1024,PQ96 (bench/ann_peer.py) runs on: an .fbin base, f32 queries, exact truth. */
export interface IvfPqFiles {
  vectors: string;
  queries: string;
  truth: string;
  index: string;
  nprobe: string;
  dim: number;
}

/**
 * One phase (`build` trains and fills the index, `serve` measures it at batch
 * 100 on 2 threads) of the DeepSearch-RL index through Debian's python3-faiss;
 * returns the JSON line the peer prints, and the run's wall time and peak RSS.
 */
export function runIvfPq(
  py: string,
  phase: 'build' | 'serve',
  f: IvfPqFiles,
): { json: Record<string, unknown>; wallS: number; maxRssMiB?: number } {
  const r = runCommand(py, [
    join(ROOT, 'bench/ann_peer.py'),
    '--engine',
    'faiss-ivfpq',
    '--phase',
    phase,
    '--base',
    f.vectors,
    '--offset',
    '8', // the .fbin header
    '--queries',
    f.queries,
    '--truth',
    f.truth,
    '--index',
    f.index,
    '--dim',
    String(f.dim),
    '--batch',
    '100',
    '--threads',
    '2',
    '--nprobe',
    f.nprobe,
  ]);
  const json = lastJsonLine(r.stdout);
  return { json, wallS: r.wallS, ...(r.maxRssMiB !== undefined ? { maxRssMiB: r.maxRssMiB } : {}) };
}

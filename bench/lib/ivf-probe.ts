/**
 * Child process for ivf-scale.ts: opens a built corpus's dense arm as the server does and, for
 * each setting `probes:rescore` given, measures recall@10 against exact truth and the latency of
 * one query at a time (query vectors given: the encoder excluded), then resident memory.
 *
 *   node dist/bench/lib/ivf-probe.js --index-dir D --name N --queries q.f32 --truth t.i32
 *     --settings 16:200,32:500 [--dim 768] [--queries-used 1000] [--evict]
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULTS } from '../../src/config.js';
import { openDenseArm } from '../../src/index/dense/dense-arm.js';
import { openCorpus } from '../../src/search/open-corpus.js';
import { arg, rssMiB, summarize } from './common.js';
import { readVectors } from './vectors.js';

const indexDir = arg('index-dir') as string;
const name = arg('name') as string;
const dim = Number(arg('dim', '768'));
const qv = readVectors(arg('queries') as string, dim);
const nq = Math.min(qv.length / dim, Number(arg('queries-used', '100000')));
const truth = new Int32Array(readFileSync(arg('truth') as string).buffer.slice(0));
const tk = truth.length / (qv.length / dim);
const settings = (arg('settings', '32:500') as string)
  .split(',')
  .map((s) => s.split(':').map(Number) as [number, number]);

// --evict: each setting starts with the full vectors' pages out of the page cache (posix_fadvise)
const evict = process.argv.includes('--evict');

/** Drops a file's pages from the page cache (as cold as this machine allows without root's drop_caches). */
function evictPages(path: string): void {
  const py = 'import os,sys\nfd=os.open(sys.argv[1],os.O_RDONLY)\nos.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)';
  const r = spawnSync('python3', ['-c', py, path], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`evicting ${path} failed: ${r.stderr}`);
}

const out: Record<string, unknown> = { rssStartMiB: rssMiB(), evicted: evict };
const rows: Array<Record<string, number>> = [];
for (const [probes, rescore] of settings) {
  const t0 = performance.now();
  const c = openCorpus(indexDir, name, {
    openDense: (dir, m, hint) =>
      openDenseArm(dir, m.dense!, hint, { mmap: true, rescoreFactor: DEFAULTS.rescoreFactor, probes, rescore }),
    verify: 'sizes',
    bm25Threads: 0,
  });
  const openMs = performance.now() - t0;
  const dense = c.dense!;
  for (let i = 0; i < Math.min(50, nq); i++) dense.search(qv.subarray(i * dim, (i + 1) * dim), 10); // warm the code
  // the full vectors are re-read for re-scoring: first with their pages evicted (a query's
  // candidates as a fresh query finds them, read from disk), then again with them cached
  const vectorsFile = join(indexDir, name, 'vectors.bin');
  if (evict) evictPages(vectorsFile);
  const pass = (): { recall10: number; p50: number; p99: number; mean: number; read: number } => {
    let hit10 = 0;
    let read = 0;
    const lat: number[] = [];
    for (let i = 0; i < nq; i++) {
      const t = performance.now();
      const got = dense.search(qv.subarray(i * dim, (i + 1) * dim), 10).map((h) => h.num);
      lat.push(performance.now() - t);
      read += dense.lastRescored ?? NaN;
      const gt = new Set(truth.subarray(i * tk, i * tk + 10));
      for (const g of got) if (gt.has(g)) hit10++;
    }
    return { recall10: hit10 / (nq * 10), read: read / nq, ...summarize(lat) };
  };
  const cold = pass();
  const warm = evict ? pass() : cold;
  rows.push({
    probes,
    rescore,
    openMs,
    recall10: cold.recall10,
    p50ms: cold.p50,
    p99ms: cold.p99,
    meanMs: cold.mean,
    rescoredPerQuery: cold.read,
    ...(evict ? { warmP50ms: warm.p50, warmP99ms: warm.p99 } : {}),
  });
  process.stderr.write(`${JSON.stringify(rows[rows.length - 1])}\n`);
  c.close();
}
out['settings'] = rows;
out['rssAfterMiB'] = rssMiB();
process.stdout.write(`${JSON.stringify(out)}\n`);

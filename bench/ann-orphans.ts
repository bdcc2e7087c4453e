/**
 * Orphans of a built index's HNSW graph: scans `dense.usearch` of --index (a
 * built index directory) with `readGraphLinks`, the detector `build-index`
 * runs after the graph is built, and confirms each orphan by searching its
 * own stored vector with a --walk-node walk on the served graph (an orphan
 * must not be found). Graphs built before build-index relinked orphans show
 * what a build leaves behind. With --relink, the graph is copied to a scratch
 * directory, loaded and relinked as `build-index` does (`relinkOrphans`), and
 * each orphan searched for again.
 *
 *   npm run build && node dist/bench/ann-orphans.js --index bench/data/scale/indexes/scale1m [--walk 5000] [--relink]
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { relinkOrphans } from '../src/index/dense/relink-orphans.js';
import { AnnBuilder, AnnIndex, type AnnParams } from '../src/index/dense/ann.js';
import { readGraphLinks } from '../src/index/dense/graph-file.js';
import { VectorReader, type VectorDtype } from '../src/index/dense/vectors-file.js';
import { createLogger } from '../src/util/log.js';
import { arg, printTable, writeResult } from './lib/common.js';

interface DenseManifest {
  encoder: { dim: number };
  vectors: { dtype: VectorDtype; count: number };
  ann: { quantization: AnnParams['quantization']; connectivity: number; expansion_add: number };
}

const dir = arg('index') as string;
const walk = Number(arg('walk', '5000'));
const dense = (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { dense: DenseManifest }).dense;
const graph = join(dir, 'dense.usearch');
const { dim } = dense.encoder;
const params: AnnParams = {
  quantization: dense.ann.quantization,
  connectivity: dense.ann.connectivity,
  expansionAdd: dense.ann.expansion_add,
  expansionSearch: walk,
};

let t = performance.now();
const links = readGraphLinks(graph);
const scanS = (performance.now() - t) / 1000;
const index = AnnIndex.open(graph, dim, params, { mmap: true, expansionSearch: walk });
const vectors = new VectorReader(join(dir, 'vectors.bin'), dim, dense.vectors.dtype, dense.vectors.count);
t = performance.now();
const found = links.orphans.filter((num) => index.search(vectors.row(num), walk).nums.includes(num));
const walkS = (performance.now() - t) / 1000;

/** Load, relink and search again, on a copy; the seconds each took. */
function relinkCopy(): Record<string, string | number> {
  const scratch = mkdtempSync(join(dir, '..', 'relink-'));
  try {
    const copy = join(scratch, 'dense.usearch');
    copyFileSync(graph, copy);
    let t0 = performance.now();
    const got = AnnBuilder.resume(copy, dim, params);
    if (!('builder' in got)) throw new Error(got.reason);
    const loadS = (performance.now() - t0) / 1000;
    t0 = performance.now();
    const report = relinkOrphans(got.builder, copy, (num) => vectors.row(num), createLogger('info'));
    const relinkS = (performance.now() - t0) / 1000;
    const served = AnnIndex.open(copy, dim, params, { mmap: true, expansionSearch: walk });
    const back = links.orphans.filter((num) => served.search(vectors.row(num), 10).nums[0] === num);
    return {
      'load s': loadS.toFixed(1),
      'relink s (scans + saves)': relinkS.toFixed(1),
      relinked: report.relinked,
      'left after relink': report.left.length,
      'orphans now own first hit': back.length,
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const row = {
  nodes: links.nodes,
  M: links.connectivity,
  efConstruction: dense.ann.expansion_add,
  'graph GB': (statSync(graph).size / 1e9).toFixed(2),
  'scan s': scanS.toFixed(1),
  orphans: links.orphans.length,
  [`found by a ${walk}-node walk`]: found.length,
  'walks s': walkS.toFixed(1),
  ...(process.argv.includes('--relink') ? relinkCopy() : {}),
};
vectors.close();
printTable(`HNSW orphans: ${dir}`, [row]);
writeResult('ann-orphans', { dir, walk, row, orphans: links.orphans });

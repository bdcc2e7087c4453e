/**
 * Nodes of an HNSW graph that no walk reaches: builds the product's graph
 * (`AnnBuilder`: i8, cosine) over --base with --threads insertion threads,
 * --builds times, and for each build searches every node's own vector (k 1,
 * efSearch 64). A node not its own first hit is searched again with a
 * 5,000-node walk; one still not found is unreachable. With --repair, each
 * unreachable node is removed and added again, and every node is searched for
 * once more. Each build is also saved and scanned for orphans (nodes no
 * base-level link points to, `readGraphLinks`), the cheap detector
 * `build-index` uses, and the two sets are compared.
 *
 *   npm run build && node dist/bench/experiments/ann-reach.js --base bench/data/vec-clustered-100k-768.fbin [--threads 2] [--builds 3] [--m 24] [--efc 128] [--repair]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Index, MetricKind, ScalarKind, type BatchMatches } from 'usearch';
import { readGraphLinks } from '../../src/index/dense/graph-file.js';
import { arg, printTable, writeResult } from '../lib/common.js';
import { fbinHeaderBytes, readVectors } from '../lib/vectors.js';

const base = arg('base') as string;
const dim = Number(arg('dim', '768'));
const threads = Number(arg('threads', '2'));
const builds = Number(arg('builds', '3'));
const m = Number(arg('m', '24'));
const efc = Number(arg('efc', '128'));
const repair = process.argv.includes('--repair');

const vecs = readVectors(base, dim, 0, undefined, fbinHeaderBytes(base));
const n = vecs.length / dim;
const row = (i: number): Float32Array => vecs.subarray(i * dim, (i + 1) * dim);

function build(): Index {
  // the product's graph settings (src/index/dense/ann.ts newIndex), efSearch 64 for the self-search
  const index = new Index({
    dimensions: dim,
    metric: MetricKind.Cos,
    quantization: ScalarKind.I8,
    connectivity: m,
    expansion_add: efc,
    expansion_search: 64,
    multi: false,
  });
  for (let s = 0; s < n; s += 10_000) {
    const e = Math.min(n, s + 10_000);
    const keys = new BigUint64Array(e - s);
    for (let i = 0; i < e - s; i++) keys[i] = BigInt(s + i);
    index.add(keys, vecs.slice(s * dim, e * dim), threads);
  }
  return index;
}

/** Nodes that are not their own first hit at efSearch 64. */
function selfMisses(index: Index): number[] {
  const miss: number[] = [];
  for (let s = 0; s < n; s += 2000) {
    const e = Math.min(n, s + 2000);
    const r = index.search(vecs.subarray(s * dim, e * dim), 1, threads) as BatchMatches;
    for (let j = 0; j < e - s; j++) if (Number(r.counts[j]) === 0 || Number(r.keys[j]) !== s + j) miss.push(s + j);
  }
  return miss;
}

/** Whether a walk over `width` nodes from the entry point finds node `num`. */
function found(index: Index, num: number, width: number): boolean {
  return Array.from(index.search(row(num), width, 1).keys, Number).includes(num);
}

const scratch = mkdtempSync(join(tmpdir(), 'ann-reach-'));
const graphPath = join(scratch, 'graph.usearch');

/** Saves the graph and scans the file for orphans; the seconds both took. */
function scanOrphans(index: Index): { orphans: number[]; s: number } {
  const t = performance.now();
  index.save(graphPath);
  const { orphans } = readGraphLinks(graphPath);
  return { orphans, s: (performance.now() - t) / 1000 };
}

const rows: Array<Record<string, string | number>> = [];
for (let b = 0; b < builds; b++) {
  let t = performance.now();
  const index = build();
  const buildS = (performance.now() - t) / 1000;
  t = performance.now();
  const misses = selfMisses(index);
  const searchS = (performance.now() - t) / 1000;
  const unreachable = misses.filter((num) => !found(index, num, 5000));
  const scan = scanOrphans(index);
  const r: Record<string, string | number> = {
    build: b + 1,
    'build s': buildS.toFixed(1),
    'self-search s': searchS.toFixed(1),
    'not own first hit': misses.length,
    unreachable: unreachable.length,
    'save + scan s': scan.s.toFixed(1),
    orphans: scan.orphans.length,
    'unreachable not orphans': unreachable.filter((num) => !scan.orphans.includes(num)).length,
  };
  if (repair) {
    const repaired = [...new Set([...unreachable, ...scan.orphans])];
    for (const num of repaired) {
      index.remove(BigInt(num));
      index.add(BigInt(num), row(num).slice(), 1);
    }
    r['unreachable after repair'] = repaired.filter((num) => !found(index, num, 5000)).length;
    r['not own first hit after repair'] = selfMisses(index).length;
    r['orphans after repair'] = scanOrphans(index).orphans.length;
  }
  rows.push(r);
}
printTable(`HNSW reachability: ${n} vectors, M ${m}, efConstruction ${efc}, i8, ${threads} insert thread(s)`, rows);
rmSync(scratch, { recursive: true, force: true });
writeResult('ann-reach', { base, n, m, efc, threads, rows });

/**
 * One BM25 inversion worker's share of a build, on this thread: every other
 * batch of 2,048 of the first `--size` generated passages (as the builder
 * deals them to two workers), inverted by one `Inverter` with a worker's
 * share of the default postings budget, spilling runs to a temp dir. Prints
 * wall and CPU seconds and the minor page faults of the inversion alone (the
 * texts are read before the clock starts). With `--passes 2` the same texts
 * go through the same inverter again as chunks numbered after the first
 * pass's: the second pass meets no word form for the first time, so the
 * difference is what first sight of the vocabulary costs (normalising,
 * numbering and ordering new terms, growing the tables, the garbage).
 *
 *   npm run build && node dist/bench/experiments/inverter-share.js [--size 1000000] [--passes 1]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULTS } from '../../src/config.js';
import { Inverter } from '../../src/index/bm25/inverter.js';
import { postingsPerThread } from '../../src/index/bm25/bm25-builder.js';
import { readCorpusBatches } from '../../src/ingest/readers.js';
import { createEnglishAnalyzer } from '../../src/text/analyzer.js';
import { arg } from '../lib/common.js';
import { ensureGenCorpus } from '../lib/child.js';

const size = Number(arg('size', '1000000'));
const passes = Number(arg('passes', '1'));
const BATCH = 2048;
const batches: Array<{ start: number; texts: string[] }> = [];
let cur: string[] = [];
let num = 0;
let start = 0;
for await (const docs of readCorpusBatches('wiki18', ensureGenCorpus(size))) {
  for (const d of docs) {
    if (cur.length === 0) start = num;
    if ((start / BATCH) % 2 === 0) cur.push(d.verbatim?.contents ?? d.text);
    num++;
    if (num % BATCH === 0) {
      if (cur.length > 0) batches.push({ start, texts: cur });
      cur = [];
    }
  }
}
if (cur.length > 0) batches.push({ start, texts: cur });

const dir = mkdtempSync(join(tmpdir(), 'inverter-share-'));
try {
  const inv = new Inverter(createEnglishAnalyzer(), postingsPerThread(DEFAULTS.maxPostingsInMemory, 2), dir, 'w0');
  const tokens = new Uint32Array(BATCH);
  for (let pass = 0; pass < passes; pass++) {
    const offset = pass * (num + BATCH);
    const f0 = process.resourceUsage();
    const t0 = performance.now();
    for (const b of batches) inv.addBatch(offset + b.start, b.texts, tokens);
    inv.spill();
    const wall = (performance.now() - t0) / 1000;
    const f1 = process.resourceUsage();
    const cpu = (f1.userCPUTime + f1.systemCPUTime - f0.userCPUTime - f0.systemCPUTime) / 1e6;
    console.log(
      JSON.stringify({
        pass,
        passages: batches.reduce((s, b) => s + b.texts.length, 0),
        wall_s: +wall.toFixed(2),
        cpu_s: +cpu.toFixed(2),
        sys_s: +((f1.systemCPUTime - f0.systemCPUTime) / 1e6).toFixed(2),
        minor_faults: f1.minorPageFault - f0.minorPageFault,
        runs: inv.runs.length,
        postings: inv.postings,
      }),
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * The JS heap a BM25 inverter keeps: the first `--size` generated passages
 * (bench/data/gen-<size>.jsonl) are counted by one `TermCounter` in batches
 * of 1,000 with a postings budget that holds them all, the texts are
 * dropped, and the heap is measured after a full collection. Each new term
 * the counter keeps should cost its own few bytes, not its passage's.
 *
 *   npm run build && node --expose-gc dist/bench/experiments/term-counter-heap.js [--size 1000000] [--count 150000]
 */
import { readCorpusBatches } from '../../src/ingest/readers.js';
import { TermCounter } from '../../src/index/bm25/term-counter.js';
import { createEnglishAnalyzer } from '../../src/text/analyzer.js';
import { arg } from '../lib/common.js';
import { ensureGenCorpus } from '../lib/child.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const size = Number(arg('size', '1000000'));
const count = Number(arg('count', '150000'));

gc();
const start = process.memoryUsage().heapUsed;
let texts: string[] | undefined = [];
for await (const docs of readCorpusBatches('wiki18', ensureGenCorpus(size))) {
  for (const d of docs) if (texts.length < count) texts.push(d.verbatim?.contents ?? d.text);
  if (texts.length >= count) break;
}
const counter = new TermCounter(createEnglishAnalyzer(), 64_000_000, 1 << 22);
const tokens = new Uint32Array(1000);
const t = performance.now();
for (let i = 0; i < texts.length; i += 1000) {
  counter.countBatch(i, texts.slice(i, i + 1000), tokens, () => {
    throw new Error('the postings budget filled: lower --count');
  });
}
const ms = performance.now() - t;
texts = undefined;
gc();
const after = process.memoryUsage().heapUsed;
process.stdout.write(
  `${count} passages counted in ${ms.toFixed(0)} ms; ${counter.terms.length} terms; ` +
    `heap ${(after / 1e6).toFixed(1)} MB with the texts dropped (${(start / 1e6).toFixed(1)} MB before they were read)\n`,
);

/**
 * The BM25 merge alone, on the runs a 2-worker build spills: the generated
 * corpus is inverted once by two inverters taking batches of 2,048 chunks in
 * turn, each with half the default postings budget (what `build-index` does
 * on two threads), and the runs are kept in bench/data/merge-runs-<size>/.
 * Then the whole term range is merged on this thread `--reps` times, timed,
 * with the output's md5 (the same bytes the build writes to bm25.postings).
 * Compare two commits by running this in each checkout on the same runs
 * (`--runs DIR`), alternately.
 *
 *   npm run build && node dist/bench/experiments/merge-runs.js [--size 1000000] [--reps 3] [--runs DIR]
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULTS } from '../../src/config.js';
import { Inverter } from '../../src/index/bm25/inverter.js';
import { mergeRuns } from '../../src/index/bm25/merge.js';
import { FileWriter, type RunFile } from '../../src/index/bm25/run-files.js';
import { chunkDocument, wordCounter } from '../../src/ingest/chunker.js';
import { readCorpusBatches } from '../../src/ingest/readers.js';
import { createEnglishAnalyzer } from '../../src/text/analyzer.js';
import { arg, BENCH_DATA, sizeLabel, writeResult } from '../lib/common.js';
import { ensureGenCorpus } from '../lib/child.js';

const n = Number(arg('size', '1000000'));
const reps = Number(arg('reps', '3'));
const runsDir = arg('runs', join(BENCH_DATA, `merge-runs-${sizeLabel(n)}`)) as string;
const BATCH = 2048; // bm25-builder.ts BATCH_CHUNKS
const WORKERS = 2;

async function spillRuns(): Promise<RunFile[]> {
  rmSync(runsDir, { recursive: true, force: true });
  mkdirSync(runsDir, { recursive: true });
  const perWorker = Math.floor(DEFAULTS.maxPostingsInMemory / WORKERS);
  const inverters = Array.from(
    { length: WORKERS },
    (_, w) => new Inverter(createEnglishAnalyzer(), perWorker, runsDir, `bm25-w${w}`),
  );
  const tokens = new Uint32Array(BATCH);
  let batch: string[] = [];
  let num = 0;
  let batches = 0;
  const flush = (): void => {
    (inverters[batches++ % WORKERS] as Inverter).addBatch(num - batch.length, batch, tokens);
    batch = [];
  };
  const chunking = { size: 0, overlap: 0, counter: wordCounter };
  for await (const docs of readCorpusBatches('wiki18', ensureGenCorpus(n))) {
    for (const doc of docs) {
      for (const piece of chunkDocument(doc, chunking)) {
        batch.push(piece.contents);
        num++;
        if (batch.length === BATCH) flush();
      }
    }
  }
  if (batch.length > 0) flush();
  for (const inv of inverters) inv.spill();
  const runs = inverters.flatMap((inv) => inv.runs);
  writeFileSync(join(runsDir, 'runs.json'), JSON.stringify(runs));
  return runs;
}

const listPath = join(runsDir, 'runs.json');
const runs: RunFile[] = existsSync(listPath)
  ? (JSON.parse(readFileSync(listPath, 'utf8')) as RunFile[])
  : await spillRuns();
const out = join(runsDir, 'merged.postings');
const samples: Array<{ wall: number; user: number; sys: number }> = [];
let terms = 0;
let postings = 0;
for (let rep = 0; rep < reps; rep++) {
  const t = performance.now();
  const cpu = process.cpuUsage();
  const writer = new FileWriter(out);
  terms = 0;
  postings = 0;
  for (const e of mergeRuns(runs, writer)) {
    terms++;
    postings += e.df;
  }
  writer.close();
  const used = process.cpuUsage(cpu);
  const s = { wall: (performance.now() - t) / 1000, user: used.user / 1e6, sys: used.system / 1e6 };
  samples.push(s);
  process.stdout.write(
    `merge ${rep + 1}/${reps}: ${s.wall.toFixed(2)} s wall, ${s.user.toFixed(2)} s user, ${s.sys.toFixed(2)} s sys\n`,
  );
}
const md5 = createHash('md5').update(readFileSync(out)).digest('hex');
process.stdout.write(`${runs.length} runs, ${terms} terms, ${postings} postings, output md5 ${md5}\n`);
writeResult(`merge-runs-${sizeLabel(n)}`, { size: n, runs: runs.length, terms, postings, md5, samples });

/**
 * The text + BM25 build against a reference peer, on the same generated
 * corpus in the same run: `build-index --no-dense` (read, SQLite chunk store,
 * BM25 inversion on worker threads, id indexes, postings merge) and Xapian
 * (bench/bm25_peer.py through Debian's python3-xapian: Snowball stems, the
 * same stop set, no positions). Then BM25 top-10 latency over the real
 * questions, one at a time, on one thread each.
 *
 *   npm run build && node dist/bench/text-build.js [--size 1000000] [--python /usr/bin/python3]
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { arg, BENCH_DATA, printTable, ROOT, sizeLabel, summarize, writeResult } from './lib/common.js';
import { ensureGenCorpus, lastJsonLine, buildWiki18Index, runCommand, textPhaseSeconds } from './lib/child.js';
import { loadRealQuestions } from './lib/queries.js';
import { benchRetriever, openBenchCorpus, precomputedEncoder } from './lib/retriever.js';

const n = Number(arg('size', '1000000'));
const py = arg('python', '/usr/bin/python3') as string;
const dir = join(BENCH_DATA, 'text-build');
const indexDir = join(dir, 'indexes');
const name = `text${sizeLabel(n)}`;
const xapianDb = join(dir, `xapian-${sizeLabel(n)}`);
mkdirSync(dir, { recursive: true });

const corpus = ensureGenCorpus(n);
const questions = loadRealQuestions();
const questionsPath = join(dir, 'questions.jsonl');
writeFileSync(questionsPath, questions.map((q) => JSON.stringify(q)).join('\n') + '\n');

// ours: the real CLI, BM25 only
rmSync(join(indexDir, name), { recursive: true, force: true });
const ours = buildWiki18Index(name, corpus, indexDir, ['--no-dense']);
const oursS = textPhaseSeconds(ours.stderr);
if (Number.isNaN(oursS)) throw new Error(`no text-phase line in build-index output:\n${ours.stderr.slice(-2000)}`);

// the peer
rmSync(xapianDb, { recursive: true, force: true });
const peer = runCommand(py, [
  join(ROOT, 'bench/bm25_peer.py'),
  '--phase',
  'build',
  '--db',
  xapianDb,
  '--input',
  corpus,
]);
const peerBuild = lastJsonLine<{ seconds: number; bytes: number }>(peer.stdout);

// BM25 latency, ours on one thread (as Xapian runs), then split with the BM25 thread (the server default)
const latency: Record<string, { p50: number; p99: number }> = {};
for (const threads of [0, 1]) {
  const c = openBenchCorpus(indexDir, name, { bm25Threads: threads });
  const r = benchRetriever(c, precomputedEncoder([], new Float32Array(0), 0), 10);
  for (const q of questions.slice(0, 100)) await r.search({ query: q, mode: 'bm25', topK: 10 });
  const ms: number[] = [];
  for (const q of questions) {
    const t = performance.now();
    await r.search({ query: q, mode: 'bm25', topK: 10 });
    ms.push(performance.now() - t);
  }
  c.close();
  latency[`ours, ${threads === 0 ? 'one thread' : 'BM25 thread'}`] = summarize(ms);
}
const pq = runCommand(py, [
  join(ROOT, 'bench/bm25_peer.py'),
  '--phase',
  'query',
  '--db',
  xapianDb,
  '--questions',
  questionsPath,
]);
const peerQuery = lastJsonLine<{ p50ms: number; p99ms: number }>(pq.stdout);

const rows = [
  {
    engine: 'ours (build-index --no-dense)',
    'text+BM25 s': oursS,
    'passages/s': Math.round(n / oursS),
    'process wall s': ours.wallS,
    'peak RSS MiB': Math.round(ours.maxRssMiB ?? 0),
    'BM25 p50 / p99 ms': `${latency['ours, one thread']!.p50.toFixed(2)} / ${latency['ours, one thread']!.p99.toFixed(2)}`,
    'with BM25 thread': `${latency['ours, BM25 thread']!.p50.toFixed(2)} / ${latency['ours, BM25 thread']!.p99.toFixed(2)}`,
  },
  {
    engine: 'Xapian 1.4 (python3-xapian)',
    'text+BM25 s': peerBuild.seconds,
    'passages/s': Math.round(n / peerBuild.seconds),
    'process wall s': peer.wallS,
    'peak RSS MiB': Math.round(peer.maxRssMiB ?? 0),
    'BM25 p50 / p99 ms': `${peerQuery.p50ms.toFixed(2)} / ${peerQuery.p99ms.toFixed(2)}`,
    'with BM25 thread': '—',
  },
];
printTable(`text + BM25 build and BM25 latency, ${sizeLabel(n)} passages, ${questions.length} real questions`, rows);
process.stdout.write(
  `\nbuild: ours ${(peerBuild.seconds / oursS).toFixed(2)}× the peer's rate; ` +
    `BM25 p50: the peer's ${(peerQuery.p50ms / latency['ours, one thread']!.p50).toFixed(2)}× ours (one thread each)\n`,
);
writeResult(`text-build-${sizeLabel(n)}`, {
  rows,
  latency,
  peerBuild,
  peerQuery,
  oursStderrTail: ours.stderr.slice(-1500),
});

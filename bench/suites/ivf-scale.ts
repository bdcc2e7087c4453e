/**
 * wiki-18 at full size on a small machine (issue 56): 21M (and 1M, 5M) clustered 768-d vectors,
 * written in a stream as float16 .npy (bench/lib/vectors.ts ensureNpyF16), imported by the real
 * build command (`--vectors --ann ivf`) beside short passages (bench/lib/ivf-data.ts), then:
 *
 * - build: wall time from the vectors on disk to a served index, peak memory, each step's time;
 * - truth: exact top 10 of 1,000 queries over the index's own vectors (numpy, bench/peers/exact_topk.py);
 * - ours: recall@10 and one-query latency at several (probes, candidates re-scored), through the
 *   dense arm as the server opens it (bench/lib/ivf-probe.ts);
 * - server: started with --no-encoder (no model: query vectors), page cache warm, then as cold
 *   as this machine allows (the index's files evicted with posix_fadvise), then with the lists
 *   read into memory at start (--no-mmap): time to ready,
 *   resident memory at ready and after 10,000 queries, the files' pages in the page cache,
 *   one client's p50/p99 through POST /retrieve, QPS at 64 clients (wrk);
 * - faiss: faiss-cpu (PyPI) IVF-PQ with refinement and IVF-RaBitQ, HNSW quantizers, on the
 *   same vectors and queries (bench/peers/faiss_ivf_peer.py).
 *
 *   npm run bench -- ivf-scale [--sizes 1000000,5000000,21000000] [--steps build,truth,ours,server,faiss]
 *     [--settings 8:100,16:200,...] [--ivfpq-refine-params 'nprobe=16,k_factor_rf=4|…'] [--ivf-rabitq-params …] [--build-log LOG]
 *     [--faiss-coarse ours|faiss]  (ours: faiss's coarse quantizer holds our list means; 21M's default)
 *     [--faiss-peers ivfpq-refine,ivf-rabitq]
 *
 * Needs about 75 GB of disk at 21M (the vectors twice as f16 during the import, then faiss's
 * IVF-PQ with an SQ8 refiner: 18 GB). Writes bench/results/ivf-scale.json, merged per size.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { arg, BENCH_DATA, BENCH_RESULTS, ROOT, sizeLabel, summarize, writeResult } from '../lib/common.js';
import { buildWiki18Index, runCommand, runProbe } from '../lib/child.js';
import { faissPython } from '../lib/faiss.js';
import { ensureNpyPrefix, ensureShortCorpus } from '../lib/ivf-data.js';
import { anonOf, rssOf, startServer } from '../lib/server.js';
import { ensureNpyF16, ensureVectors, readVectors } from '../lib/vectors.js';
import { runWrk } from '../lib/wrk.js';

const sizes = (arg('sizes', '1000000,5000000,21000000') as string).split(',').map(Number);
const steps = new Set((arg('steps', 'build,truth,ours,server,faiss') as string).split(','));
const dim = 768;
const dir = join(BENCH_DATA, 'ivf');
const indexDir = join(dir, 'indexes');
const model = join(dir, 'bert-768-1layer');
const queriesPath = join(dir, 'q1000.f32');
const log = (line: string): void => void process.stderr.write(`${line}\n`);
const FULL = 21_000_000;
/** Rows faiss trains its codes on when the coarse quantizer is ours (PQ's k-means samples 65,536 anyway). */
const TRAIN_CODES = 131_072;

const resultPath = join(BENCH_RESULTS, 'ivf-scale.json');
interface RunStamp {
  date?: string;
  commit?: string;
  command?: string;
}
const previous = existsSync(resultPath)
  ? (JSON.parse(readFileSync(resultPath, 'utf8')) as RunStamp & {
      runs?: Record<string, Record<string, unknown>>;
      earlier?: RunStamp[];
    })
  : {};
const runs: Record<string, Record<string, unknown>> = previous.runs ?? {};
// a run of some steps or sizes keeps the others' figures: the runs they came from are named too
// (the last six: a run that measured everything again is a run of every step and size)
const earlier: RunStamp[] = previous.command
  ? [{ date: previous.date, commit: previous.commit, command: previous.command }, ...(previous.earlier ?? [])].slice(
      0,
      6,
    )
  : [];

ensureVectors(queriesPath, 'clustered', 1000, dim, 22);
const queries = readVectors(queriesPath, dim);

for (const n of sizes) {
  const label = sizeLabel(n);
  const name = `ivf${label}`;
  const live = join(indexDir, name);
  const run: Record<string, unknown> = { ...(runs[label] ?? {}), passages: n };
  runs[label] = run;
  const save = (): void => void writeResult('ivf-scale', { runs, earlier });

  const buildLog = arg('build-log') as string | undefined;
  if (steps.has('build') && buildLog !== undefined) {
    // a build run by hand with the same command under `/usr/bin/time -f '__MAXRSS__%M wall %e'`:
    // its log read back, for a build already made that the suite would otherwise have to repeat
    run['build'] = { ...fromBuildLog(readFileSync(buildLog, 'utf8'), live), fromLog: true };
    save();
  } else if (steps.has('build')) {
    const corpus = join(dir, `corpus-${label}.jsonl`);
    await ensureShortCorpus(join(dir, 'corpus-21m.jsonl'), FULL);
    if (!existsSync(corpus))
      execFileSync('sh', ['-c', `head -n ${n} "${join(dir, 'corpus-21m.jsonl')}" > "${corpus}"`]);
    const full = join(dir, 'vec-21m.npy');
    const vectors = n === FULL ? full : join(dir, `vec-${label}.npy`);
    // a prefix already written needs not the 21M file (32 GB), which may be gone to make room
    if (!existsSync(vectors)) {
      ensureNpyF16(full, 'clustered', FULL, dim, 21);
      ensureNpyPrefix(full, vectors, n, dim);
    }
    log(`${label}: building from ${vectors}`);
    const b = buildWiki18Index(name, corpus, indexDir, [
      ...['--vectors', vectors, '--vectors-dtype', 'f16', '--model-path', model, '--ann', 'ivf'],
    ]);
    run['build'] = buildRecord(live, b.wallS, b.maxRssMiB, b.stderr);
    save();
  }

  const truth = join(dir, `truth-${label}.i32`);
  if (steps.has('truth') && !existsSync(truth)) {
    const py = faissPython(log);
    const t = runCommand(py, [
      join(ROOT, 'bench/peers/exact_topk.py'),
      ...['--vectors', join(live, 'vectors.bin'), '--dtype', 'f16', '--dim', String(dim)],
      ...['--queries', queriesPath, '--out', truth],
    ]);
    run['truthS'] = t.wallS;
    save();
  }

  if ((steps.has('ours') || steps.has('server')) && existsSync(join(live, 'dense.ivf')))
    run['servedFormat'] = ivfFormat(live);
  if (steps.has('ours')) {
    const probe = runProbe(join(ROOT, 'dist/bench/lib/ivf-probe.js'), [
      ...['--index-dir', indexDir, '--name', name, '--queries', queriesPath, '--truth', truth],
      ...['--settings', arg('settings', '4:100,8:100,8:200,16:200,16:500,32:500,64:1000') as string],
      '--evict',
    ]);
    run['ours'] = probe;
    save();
  }

  if (steps.has('server')) {
    run['server'] = {
      warm: await serve(name, false),
      cold: await serve(name, true),
      // the lists read into memory at start (--no-mmap): no copy from the page cache per list
      held: await serve(name, false, ['--no-mmap']),
    };
    save();
  }

  if (steps.has('faiss')) {
    run['faiss'] = faiss(label, live, truth, n);
    save();
  }
}
writeResult('ivf-scale', { runs, earlier });

/** The version of an index's dense.ivf (format 2 reads codes against the query's residual). */
function ivfFormat(live: string): number {
  const fd = openSync(join(live, 'dense.ivf'), 'r');
  try {
    const head = Buffer.alloc(4096);
    readSync(fd, head, 0, head.length, 0);
    return (JSON.parse(head.toString('utf8', 12, 12 + head.readUInt32LE(8))) as { version: number }).version;
  } finally {
    closeSync(fd);
  }
}

/** A build's record from its log: the wrapper's last line gives peak RSS (KiB) and wall seconds. */
function fromBuildLog(text: string, live: string): Record<string, unknown> {
  const m = /__MAXRSS__(\d+) wall ([\d.]+)/.exec(text);
  if (!m) throw new Error('--build-log: no "__MAXRSS__ … wall …" line: give the log of a finished build');
  return buildRecord(live, Number(m[2]), Number(m[1]) / 1024, text);
}

/** A finished build's record: its time, peak memory and steps, and the index's settings and files. */
function buildRecord(
  live: string,
  wallS: number,
  maxRssMiB: number | undefined,
  stderr: string,
): Record<string, unknown> {
  const manifest = JSON.parse(readFileSync(join(live, 'manifest.json'), 'utf8')) as {
    dense: { ann: Record<string, number> };
    files: Record<string, { bytes: number }>;
  };
  return {
    ivfFormat: ivfFormat(live),
    wallS,
    maxRssMiB,
    steps: stepSeconds(stderr),
    ann: manifest.dense.ann,
    bytes: Object.fromEntries(Object.entries(manifest.files).map(([f, r]) => [f, r.bytes])),
  };
}

/** Seconds of each build step, from the last line of each progress bar ("… in 1m02s"). */
function stepSeconds(stderr: string): Record<string, number> {
  const out: Record<string, number> = {};
  const sec = (s: string): number => {
    const m = /(?:(\d+)h)?(?:(\d+)m)?([\d.]+)s/.exec(s);
    return m ? Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3]) : NaN;
  };
  for (const [key, re] of [
    ['text+BM25', /text and BM25 phase: \S+ chunks in ([\dhms.]+)/],
    ['import vectors', /^import vectors .* in ([\dhms.]+)$/m],
    ['IVF lists', /^IVF lists \(k-means\) .* in ([\dhms.]+)$/m],
    ['IVF codes', /^IVF codes .* in ([\dhms.]+)$/m],
    ['IVF file', /^IVF file .* in ([\dhms.]+)$/m],
    ['checksums', /^checksum[^\n]* in ([\dhms.]+)$/m],
  ] as const) {
    const all = [...stderr.matchAll(new RegExp(re.source, re.flags.includes('m') ? 'gm' : 'g'))];
    const last = all[all.length - 1];
    if (last) out[key] = sec(last[1] as string);
  }
  return out;
}

/** The index files evicted from the page cache (posix_fadvise DONTNEED, what a reboot would leave). */
function evict(live: string): void {
  const files = ['dense.ivf', 'vectors.bin', 'chunks.sqlite', 'bm25.postings', 'bm25.norms', 'bm25.blocks'].map((f) =>
    join(live, f),
  );
  execFileSync('python3', [
    '-c',
    'import os,sys\nfor p in sys.argv[1:]:\n  if os.path.exists(p):\n    fd=os.open(p,os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED); os.close(fd)',
    ...files,
  ]);
}

/** MiB of a file's pages in the page cache (util-linux fincore). */
function cachedMiB(path: string): number {
  const r = spawnSync('fincore', ['--bytes', '--noheadings', '--output', 'RES', path], { encoding: 'utf8' });
  return r.status === 0 ? Number(r.stdout.trim()) / 2 ** 20 : NaN;
}

async function serve(name: string, cold: boolean, flags: string[] = []): Promise<Record<string, unknown>> {
  const live = join(indexDir, name);
  if (cold) evict(live);
  const srv = await startServer([
    ...['--corpus', name, '--index-dir', indexDir, '--no-encoder', '--verify', 'sample'],
    ...flags,
  ]);
  try {
    const out: Record<string, unknown> = {
      readyS: srv.readyMs / 1000,
      rssReadyMiB: rssOf(srv.pid),
      anonReadyMiB: anonOf(srv.pid),
    };
    const body = (i: number): string =>
      JSON.stringify({
        query_vectors: [Array.from(queries.subarray((i % 1000) * dim, ((i % 1000) + 1) * dim))],
        topk: 10,
      });
    const one = async (i: number): Promise<number> => {
      const t = performance.now();
      const r = await fetch(`${srv.url}/retrieve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: body(i),
      });
      await r.text();
      if (r.status !== 200) throw new Error(`/retrieve answered ${r.status}`);
      return performance.now() - t;
    };
    if (cold) {
      // the first hundred queries after a start, their lists and rows read from disk
      const lat: number[] = [];
      for (let i = 0; i < 100; i++) lat.push(await one(i));
      const s = summarize(lat);
      Object.assign(out, { first100P50ms: s.p50, first100P99ms: s.p99, firstMs: lat[0] });
      return out;
    }
    const lat: number[] = [];
    for (let i = 0; i < 10_000; i++) lat.push(await one(i));
    const s = summarize(lat.slice(1000));
    Object.assign(out, {
      p50ms: s.p50,
      p99ms: s.p99,
      rssAfter10kMiB: rssOf(srv.pid),
      anonAfter10kMiB: anonOf(srv.pid),
      cachedMiB: {
        'dense.ivf': cachedMiB(join(live, 'dense.ivf')),
        'vectors.bin': cachedMiB(join(live, 'vectors.bin')),
      },
    });
    const w = runWrk(
      srv.url,
      '/retrieve',
      Array.from({ length: 1000 }, (_, i) => `[${Array.from(queries.subarray(i * dim, (i + 1) * dim)).join(',')}]`),
      '{"query_vectors":[QUERY],"topk":10}',
      64,
      Number(arg('seconds', '30')),
      {},
      { raw: true },
    );
    Object.assign(out, { qps64: w.rps, p50ms64: w.p50ms, p99ms64: w.p99ms, errors64: w.non2xx + w.socketErrors });
    return out;
  } finally {
    await srv.stop();
  }
}

/** faiss's IVF-PQ with refinement and IVF-RaBitQ on the same vectors, built once and kept beside them. */
function faiss(label: string, live: string, truth: string, n: number): Record<string, unknown> {
  const py = faissPython(log);
  const lists = (JSON.parse(readFileSync(join(live, 'manifest.json'), 'utf8')) as { dense: { ann: { lists: number } } })
    .dense.ann.lists;
  // the lists scanned grow with the lists made (1M: 8 to 64 of 4,096; 21M: 32 to 256 of 16,384); the
  // refiner re-ranks 20 to 100 × k, as ours re-scores 200 to 1,000 candidates
  const probes = [512, 256, 128, 64].map((d) => Math.max(1, Math.round(lists / d)));
  const peers = [
    {
      key: 'ivfpq-refine',
      factory: `IVF${lists}_HNSW32,PQ96,Refine(SQ8)`,
      params: probes.map((p, i) => `nprobe=${p},k_factor_rf=${[20, 20, 50, 100][i]}`).join('|'),
    },
    {
      key: 'ivf-rabitq',
      factory: `IVF${lists}_HNSW32,RaBitQ`,
      // its scan took 8 to 12 µs a code at 1M (nprobe 64: 197 ms a query): at 21M, where 32
      // lists are 41,000 codes, the two smallest settings and 200 queries
      params: (n >= FULL ? probes.slice(0, 2) : probes).map((p) => `nprobe=${p}`).join('|'),
      maxQueries: n >= FULL ? 200 : 1000,
    },
  ];
  // faiss's own k-means of 16,384 lists takes hours on 2 cores (1M's 4,096 took 14 minutes); at
  // that size it gets our list means and trains only its codes: its build time then leaves the
  // k-means out, which ours includes
  const coarse = (arg('faiss-coarse', n >= FULL ? 'ours' : 'faiss') as string) === 'ours';
  // --faiss-peers ivfpq-refine,ivf-rabitq: those alone, the others' figures kept from before
  const chosen = (arg('faiss-peers', peers.map((p) => p.key).join(',')) as string).split(',');
  const out: Record<string, unknown> = { ...((runs[label]?.['faiss'] as Record<string, unknown> | undefined) ?? {}) };
  for (const p of peers.filter((x) => chosen.includes(x.key))) {
    const index = join(dir, `faiss-${p.key}-${label}.faiss`);
    const built = `${index}.build.json`;
    if (!existsSync(built)) {
      log(`${label}: faiss ${p.factory}`);
      const b = runCommand(py, [
        join(ROOT, 'bench/peers/faiss_ivf_peer.py'),
        ...['--phase', 'build', '--vectors', join(live, 'vectors.bin'), '--factory', p.factory, '--index', index],
        ...['--train', String(Math.min(n, coarse ? TRAIN_CODES : lists * 32))],
        ...(coarse ? ['--coarse-from', join(live, 'dense.ivf')] : []),
      ]);
      writeFileSync(
        built,
        JSON.stringify({
          ...JSON.parse(b.stdout.trim().split('\n').pop() as string),
          wallS: b.wallS,
          maxRssMiBTime: b.maxRssMiB,
        }),
      );
    }
    const s = runCommand(py, [
      join(ROOT, 'bench/peers/faiss_ivf_peer.py'),
      ...['--phase', 'serve', '--vectors', join(live, 'vectors.bin'), '--factory', p.factory, '--index', index],
      ...['--queries', queriesPath, '--truth', truth, '--params', arg(`${p.key}-params`, p.params) as string],
      ...['--max-queries', String(p.maxQueries ?? 1000)],
    ]);
    out[p.key] = {
      build: JSON.parse(readFileSync(built, 'utf8')) as unknown,
      serve: JSON.parse(s.stdout.trim().split('\n').pop() as string) as unknown,
      indexMiB: statSync(index).size / 2 ** 20,
    };
  }
  return out;
}

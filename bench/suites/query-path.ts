/**
 * One query's path, stage by stage, against onnxruntime-Python's encoder
 * alone on the same file, texts and threads, in one run; and the memory each
 * holds. Models: e5-small-v2 fp32 and int8 from Maven Central
 * (scripts/models/real-models.ts).
 *
 *   npm run bench -- query-path [--models e5-small-v2,e5-small-v2-int8] [--ort 1.23.2,1.30.0]
 *                               [--rounds 2] [--threads 2]
 *
 * For each model and each ONNX Runtime named (the product's own, or another
 * installed into bench/.ort/VERSION and loaded in its place by
 * bench/lib/ort-alias.ts): a server on 2WikiMultiHopQA-200's 1,585 passages
 * (result and vector caches off) answers its 200 questions one at a time,
 * `POST /retrieve` dense top 5 (node:http, one kept-alive connection), in
 * rounds alternating with the Python peer
 * (bench/peers/ort_query_peer.py) encoding the same questions alone. Reported:
 * p50 and p99 of each, their ratio, the server's mean time per stage from its
 * own `retriever_stage_seconds` (read, encode: tokenize, hop, run, pool;
 * dense, materialize, write) and the rest of the client's round trip; resident
 * memory of the server at ready against the Python process holding the model
 * after one query; build throughput (passages a second at batch 32, the build's
 * encoder). Writes bench/results/query-path.json.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import {
  fetchRealModel,
  modelFetchOptions,
  onnxFileOf,
  pythonFor,
  REAL_MODELS,
  variantArgs,
} from '../../scripts/models/real-models.js';
import { arg, BENCH_DATA, installedOrtVersion, printTable, ROOT, summarize, writeResult } from '../lib/common.js';
import { load2Wiki } from '../lib/queries.js';
import { anonOf, rssOf, startServer, type BenchServer } from '../lib/server.js';

const threads = Number(arg('threads', '2'));
const rounds = Number(arg('rounds', '2'));
const models = (arg('models') ?? 'e5-small-v2,e5-small-v2-int8').split(',');
const productOrt = installedOrtVersion();
const orts = (arg('ort') ?? productOrt).split(',');
const log = (line: string): void => void process.stderr.write(`${line}\n`);

const { corpusFile, passages, questions } = load2Wiki();
const work = join(BENCH_DATA, 'query-path');
mkdirSync(work, { recursive: true });

/** Node flags and environment that make a child process load ONNX Runtime `version`. */
function ortRuntime(version: string): { node: string[]; env: NodeJS.ProcessEnv } {
  if (version === productOrt) return { node: [], env: {} };
  const dir = join(ROOT, 'bench/.ort', version);
  if (!existsSync(join(dir, 'node_modules/onnxruntime-node/package.json'))) {
    log(`installing onnxruntime-node@${version} into ${dir}`);
    mkdirSync(dir, { recursive: true });
    execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', `onnxruntime-node@${version}`], {
      stdio: ['ignore', 2, 2],
      env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' },
    });
  }
  return { node: ['--import', join(ROOT, 'dist/bench/lib/ort-alias.js')], env: { RETRIEVER_BENCH_ORT: dir } };
}

/** The server's stage sums and counts, from /metrics. */
async function stages(server: BenchServer): Promise<Map<string, { sum: number; count: number }>> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const out = new Map<string, { sum: number; count: number }>();
  for (const m of text.matchAll(/^retriever_stage_seconds_(sum|count)\{stage="(\w+)"\} ([\d.e+-]+)$/gm)) {
    const s = out.get(m[2] as string) ?? { sum: 0, count: 0 };
    s[m[1] as 'sum' | 'count'] = Number(m[3]);
    out.set(m[2] as string, s);
  }
  return out;
}

/** One POST over a kept-alive connection, with node:http: Node's `fetch` (undici) adds about 1 ms a request of its own. */
function post(agent: Agent, url: URL, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function oneAtATime(server: BenchServer, qs: string[]): Promise<number[]> {
  const ms: number[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const url = new URL(`${server.url}/retrieve`);
  try {
    for (const [i, q] of [...qs.slice(0, 10), ...qs].entries()) {
      const t = performance.now();
      const r = await post(agent, url, JSON.stringify({ queries: [q], topk: 5, mode: 'dense' }));
      if (r.status !== 200) throw new Error(`/retrieve answered ${r.status}: ${r.text}`);
      if (i >= 10) ms.push(performance.now() - t); // the first ten warm up
    }
  } finally {
    agent.destroy();
  }
  return ms;
}

type Row = Record<string, string | number>;
const latency: Row[] = [];
const breakdown: Row[] = [];
const memory: Row[] = [];
const build: Row[] = [];

for (const model of models) {
  const dir = await fetchRealModel(model, modelFetchOptions(log));
  const indexDir = join(BENCH_DATA, 'real-indexes', model);
  if (!existsSync(join(indexDir, '2wiki', 'manifest.json'))) {
    execFileSync(
      process.execPath,
      [
        join(ROOT, 'bin/build-index.js'),
        ...['--name', '2wiki', '--input', corpusFile, '--format', 'wiki18', '--index-dir', indexDir],
        ...['--model-path', dir, ...variantArgs(model), '--no-progress'],
      ],
      { stdio: ['ignore', 2, 2] },
    );
  }
  const manifest = JSON.parse(readFileSync(join(indexDir, '2wiki', 'manifest.json'), 'utf8')) as {
    dense: { encoder: { query_prefix: string; passage_prefix: string; max_length: number } };
  };
  const enc = manifest.dense.encoder;
  const qFile = join(work, `${model}-queries.jsonl`);
  writeFileSync(qFile, questions.map((q) => JSON.stringify(enc.query_prefix + q)).join('\n') + '\n');
  const python = (): { ms: number[]; rss: number; anon: number; ort: string } => {
    const out = execFileSync(
      pythonFor({ log }),
      [
        join(ROOT, 'bench/peers/ort_query_peer.py'),
        ...['--model-dir', dir, '--onnx', onnxFileOf(model), '--queries', qFile],
        ...['--max-length', String(enc.max_length), '--threads', String(threads)],
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 2] },
    );
    const r = JSON.parse(out.trim().split('\n').pop() as string) as {
      ms: number[];
      rss_mb: number;
      anon_mb: number;
      ort: string;
    };
    return { ms: r.ms, rss: r.rss_mb, anon: r.anon_mb, ort: r.ort };
  };

  for (const version of orts) {
    const rt = ortRuntime(version);
    const server = await startServer(
      [
        ...['--corpus', '2wiki', '--index-dir', indexDir, '--model-path', dir, ...variantArgs(model)],
        ...['--encoder-threads', String(threads), '--cache-size', '0', '--vector-cache-size', '0'],
      ],
      rt,
    );
    const ours: number[] = [];
    const peer: number[] = [];
    let peerRss = NaN;
    let peerAnon = NaN;
    let peerOrt = '';
    const readyRss = rssOf(server.pid);
    const readyAnon = anonOf(server.pid);
    const before = await stages(server);
    let after: typeof before;
    try {
      for (let round = 0; round < rounds; round++) {
        const p = python();
        peer.push(...p.ms);
        peerRss = p.rss;
        peerAnon = p.anon;
        peerOrt = p.ort;
        ours.push(...(await oneAtATime(server, questions)));
      }
      after = await stages(server);
    } finally {
      await server.stop();
    }
    const o = summarize(ours);
    const py = summarize(peer);
    const label = `${model}, onnxruntime-node ${version}`;
    latency.push({
      run: label,
      'ours p50 ms': Number(o.p50.toFixed(2)),
      'ours p99 ms': Number(o.p99.toFixed(2)),
      [`python encoder alone p50 ms`]: Number(py.p50.toFixed(2)),
      'python p99 ms': Number(py.p99.toFixed(2)),
      'p50 ours ÷ python': Number((o.p50 / py.p50).toFixed(2)),
      'p99 ours ÷ python': Number((o.p99 / py.p99).toFixed(2)),
      'python onnxruntime': peerOrt,
    });
    memory.push({
      run: label,
      'ours at ready MiB': Math.round(readyRss),
      'python holding the model MiB': Math.round(peerRss),
      'ours ÷ python': Number((readyRss / peerRss).toFixed(2)),
      // without the pages of mapped files (Node's own executable is about 54 MiB of them)
      'ours anonymous MiB': Math.round(readyAnon),
      'python anonymous MiB': Math.round(peerAnon),
      'anonymous ours ÷ python': Number((readyAnon / peerAnon).toFixed(2)),
    });
    // mean milliseconds a request spent in each stage (the encoder's own split inside `encode`)
    const mean = (stage: string): number => {
      const a = after.get(stage);
      const b = before.get(stage) ?? { sum: 0, count: 0 };
      return a && a.count > b.count ? ((a.sum - b.sum) / (a.count - b.count)) * 1000 : 0;
    };
    const stagesMs = Object.fromEntries(
      ['read', 'encode', 'tokenize', 'hop', 'run', 'pool', 'dense', 'materialize', 'write'].map((s) => [s, mean(s)]),
    );
    const measured = ['read', 'encode', 'dense', 'materialize', 'write'].reduce((t, s) => t + (stagesMs[s] ?? 0), 0);
    breakdown.push({
      run: label,
      ...Object.fromEntries(Object.entries(stagesMs).map(([k, v]) => [`${k} ms`, Number(v.toFixed(3))])),
      'rest (HTTP, event loop) ms': Number((o.mean - measured).toFixed(3)),
      'client mean ms': Number(o.mean.toFixed(3)),
      'python mean ms': Number(py.mean.toFixed(3)),
    });
    // build throughput: the product's encoder at batch 32 on the 1,585 passages
    const pFile = join(work, `${model}-passages.jsonl`);
    writeFileSync(pFile, passages.map((p) => JSON.stringify(enc.passage_prefix + p)).join('\n') + '\n');
    const variant = REAL_MODELS[model]?.variant ?? 'fp32';
    const out = execFileSync(
      process.execPath,
      [...rt.node, join(ROOT, 'dist/bench/lib/embed-rate.js'), dir, variant, String(threads), pFile],
      { encoding: 'utf8', env: { ...process.env, ...rt.env }, stdio: ['ignore', 'pipe', 2] },
    );
    const rate = (JSON.parse(out.trim().split('\n').pop() as string) as { passages_per_s: number }).passages_per_s;
    build.push({ run: label, 'passages/s at batch 32': Number(rate.toFixed(1)) });
  }
}

printTable('One query at a time: ours end to end against onnxruntime-Python encoding alone', latency);
printTable('Where a request spends its time (server means, ms)', breakdown);
printTable('Resident memory: our server at ready against a Python process holding the model', memory);
printTable('Build throughput', build);
writeResult('query-path', {
  threads,
  rounds,
  queries: questions.length,
  passages: passages.length,
  latency,
  breakdown,
  memory,
  build,
});

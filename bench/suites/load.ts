/**
 * Load: `connections` concurrent clients (wrk) for `seconds` against
 * /retrieve on a 100k-chunk index with a BERT-base-shaped encoder (random
 * weights, e5-base FLOPs), result cache off so every request does real work:
 * ours hybrid with micro-batching on and off, ours dense, and the reference
 * peer, a Search-R1-style server (bench/peers/peer_server.py: FastAPI + PyTorch +
 * faiss Flat) on the same vectors and passages, dense like Search-R1's.
 * Reports QPS, p50/p99 and errors (wrk's timeout is 60 s).
 *
 *   npm run bench -- load [--connections 256 --seconds 60] [--peer-python PY] [--route mcp]
 *     [--batch-padding 0]
 *
 * `--model DIR --tag NAME` runs the same load with another encoder (its own
 * index and vectors, no peer), e.g. the tiny e5, where a forward pass costs
 * less than the per-call overhead, as on a GPU.
 *
 * The peer needs python3 with torch, faiss, fastapi and uvicorn, e.g.
 *   python3 -m venv --system-site-packages bench/data/peer-venv   # Debian: python3-faiss python3-fastapi python3-uvicorn
 *   bench/data/peer-venv/bin/pip install torch                     # PyPI's CPU wheel (Debian's torch uses a generic BLAS)
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { arg, BENCH_DATA, printTable, ROOT, writeResult } from '../lib/common.js';
import { BERT_BASE, ensureLoadIndex, loadIndexInputs, loadServerArgs } from '../lib/load-index.js';
import { loadRealQuestions } from '../lib/queries.js';
import { startServer } from '../lib/server.js';
import { runWrk } from '../lib/wrk.js';

const connections = Number(arg('connections', '256'));
const seconds = Number(arg('seconds', '60'));
const model = arg('model', BERT_BASE) as string;
const tag = arg('tag');
// --route mcp: stateless MCP tools/call on /mcp instead of Search-R1's /retrieve (no peer then)
const route = arg('route', 'retrieve') as string;
// the server's --batch-padding (0 = pad each encoder batch to its longest text); its default when absent
const batchPadding = arg('batch-padding');
const withPeer = model === BERT_BASE && route === 'retrieve';
const indexName = tag ? `load100k-${tag}` : 'load100k';
const { corpus, vectors } = loadIndexInputs(model);
const venvPython = join(BENCH_DATA, 'peer-venv', 'bin', 'python');
const peerPython = arg('peer-python', existsSync(venvPython) ? venvPython : 'python3') as string;

ensureLoadIndex(indexName, model);
const queries = loadRealQuestions();
const rows: Array<Record<string, string | number>> = [];

async function measure(server: string, mode: string, batching: string, url: string): Promise<void> {
  // the peer only speaks /retrieve
  const [path, body, headers] =
    route === 'mcp' && server === 'retriever-mcp'
      ? [
          '/mcp',
          `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":QUERY,"top_k":3,"mode":"${mode}"}}}`,
          { Accept: 'application/json, text/event-stream' },
        ]
      : ['/retrieve', `{"queries":[QUERY],"topk":3,"mode":"${mode}"}`, {}];
  const w = runWrk(url, path, queries, body, connections, seconds, headers);
  const row: Record<string, string | number> = {
    server,
    mode,
    batching,
    connections,
    requests: w.requests,
    QPS: w.rps,
    'p50 ms': w.p50ms,
    'p90 ms': w.p90ms,
    'p99 ms': w.p99ms,
    errors: w.non2xx + w.socketErrors,
    // Little's law: requests the server actually had in service; below `connections`, the rest waited unserved
    'served concurrently': Math.round((w.rps * w.meanMs) / 1000),
  };
  if (server === 'retriever-mcp') {
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const sum = Number(/retriever_encoder_batch_size_sum ([\d.e+]+)/.exec(metrics)?.[1]);
    const count = Number(/retriever_encoder_batch_size_count (\d+)/.exec(metrics)?.[1]);
    row['mean encoder batch'] = sum / count;
  }
  rows.push(row);
  process.stderr.write(`${JSON.stringify(row)}\n`);
}

for (const [mode, batching] of [
  ['hybrid', 'on'],
  ['hybrid', 'off'],
  ['dense', 'on'],
] as const) {
  const srv = await startServer([
    ...loadServerArgs(indexName, model),
    '--batch-max',
    batching === 'on' ? '64' : '1',
    '--max-inflight',
    '4096',
    '--encoder-queue',
    '100000',
    '--deadline-ms',
    '120000',
    ...(batchPadding !== undefined ? ['--batch-padding', batchPadding] : []),
  ]);
  try {
    await measure('retriever-mcp', mode, batching, srv.url);
  } finally {
    await srv.stop();
  }
}

const peer = withPeer ? await startPeer() : null;
if (peer) {
  try {
    await measure('Search-R1-style (FastAPI+torch+faiss Flat)', 'dense', 'none', peer.url);
  } finally {
    peer.stop();
  }
}

const qps = (server: string, mode: string, batching: string): number =>
  Number(rows.find((r) => r['server'] === server && r['mode'] === mode && r['batching'] === batching)?.['QPS']);
const ratio = qps('retriever-mcp', 'hybrid', 'on') / qps('retriever-mcp', 'hybrid', 'off');
const peerRatio = peer
  ? qps('retriever-mcp', 'dense', 'on') / qps('Search-R1-style (FastAPI+torch+faiss Flat)', 'dense', 'none')
  : NaN;
printTable(
  `${route === 'mcp' ? '/mcp (stateless tools/call)' : '/retrieve'}, 100k chunks, encoder ${model} on CPU, result cache off; hybrid batching on/off QPS ${ratio.toFixed(2)}×; dense ours/peer QPS ${peerRatio.toFixed(2)}×`,
  rows,
);
writeResult(tag ? `load-${tag}` : 'load', {
  model,
  connections,
  seconds,
  rows,
  qpsRatio: ratio,
  peerQpsRatio: peerRatio,
});

/** The Search-R1-style peer on the same vectors and passages, or null (with a note) when its Python deps are missing. */
async function startPeer(): Promise<{ url: string; stop: () => void } | null> {
  const port = await freePort();
  const child = spawn(
    peerPython,
    [
      join(ROOT, 'bench', 'peers', 'peer_server.py'),
      '--vectors',
      vectors,
      '--corpus',
      corpus,
      '--tokenizer',
      join(model, 'tokenizer.json'),
      '--port',
      String(port),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  let exited = false;
  child.on('exit', () => (exited = true));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 1200 && !exited; i++) {
    const r = await fetch(`${url}/ready`).catch(() => undefined);
    if (r?.status === 200) return { url, stop: () => child.kill('SIGTERM') };
    await new Promise((res) => setTimeout(res, 100));
  }
  child.kill('SIGKILL');
  process.stderr.write(`peer skipped: ${peerPython} bench/peers/peer_server.py did not start:\n${err.slice(-1500)}\n`);
  return null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (a && typeof a === 'object' ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

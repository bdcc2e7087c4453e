/**
 * A node lost under load: the MultiHop-RAG real-model index on a three-node
 * OpenSearch cluster (3 shards, 1 replica), served by `retriever-mcp
 * --backend` over HTTP, with 256 clients sending hybrid /retrieve requests
 * back to back. After a steady stretch the elected cluster manager is
 * SIGKILLed; later it is started again on its data. Reports the load held
 * before, during and after, and once the node is back, the longest stretch
 * with no answer, the time until throughput is back, p99 in each stretch,
 * errors, and the chunks counted afterwards. The embedded server on
 * the same index takes the same load first, as the reference.
 *
 *   npm run build:bench
 *   npm run bench -- engine-failover [--dataset multihop] [--clients 256] [--steady-s 15] [--after-s 30] [--back-s 20]
 *
 * Writes bench/results/engine-failover.json.
 */
import { join } from 'node:path';
import { connectEngine } from '../../src/engine/opensearch/client.js';
import { pushCorpus } from '../../src/engine/opensearch/push.js';
import { aliasFor } from '../../src/engine/opensearch/schema.js';
import { loadQueries } from '../../src/eval/queries.js';
import { percentile } from '../../src/util/percentile.js';
import { createLogger } from '../../src/util/log.js';
import { arg, BENCH_DATA, writeResult } from '../lib/common.js';
import { DATASETS } from '../lib/datasets.js';
import { clusterHealth, managerIndex, startCluster } from '../../test/helpers/opensearch-cluster.js';
import { rssOf, startServer, type BenchServer } from '../lib/server.js';

const model = arg('model', 'all-MiniLM-L6-v2') as string;
const dataset = DATASETS.find((d) => d.name === (arg('dataset') ?? 'multihop'))!;
const clients = Number(arg('clients', '256'));
const steadyS = Number(arg('steady-s', '15'));
const afterS = Number(arg('after-s', '30'));
const backS = Number(arg('back-s', '20'));
const indexDir = join(BENCH_DATA, 'real-indexes', model);
const log = createLogger('info');

interface Sample {
  start: number;
  end: number;
  ok: boolean;
}

/** `clients` loops of one request after another until `stop()`; every answer is a sample. */
function drive(url: string, texts: string[]): { samples: Sample[]; errors: string[]; stop: () => Promise<void> } {
  const samples: Sample[] = [];
  const errors: string[] = [];
  let running = true;
  const loop = async (c: number): Promise<void> => {
    for (let i = 0; running; i++) {
      const start = performance.now();
      let ok = false;
      try {
        const r = await fetch(`${url}/retrieve`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ queries: [texts[(c * 7 + i) % texts.length]], topk: 5, mode: 'hybrid' }),
        });
        const body = await r.text();
        ok = r.status === 200;
        if (!ok && errors.length < 20) errors.push(`${r.status} ${body.slice(0, 200)}`);
      } catch (err) {
        if (errors.length < 20) errors.push((err as Error).message);
      }
      samples.push({ start, end: performance.now(), ok });
    }
  };
  const all = Promise.all(Array.from({ length: clients }, (_, c) => loop(c)));
  return {
    samples,
    errors,
    stop: async () => {
      running = false;
      await all;
    },
  };
}

function stretch(samples: Sample[], from: number, to: number) {
  const inside = samples.filter((s) => s.end >= from && s.end < to);
  const lat = inside.map((s) => s.end - s.start).sort((a, b) => a - b);
  return {
    seconds: (to - from) / 1000,
    answers: inside.length,
    errors: inside.filter((s) => !s.ok).length,
    qps: inside.filter((s) => s.ok).length / ((to - from) / 1000),
    p50Ms: percentile(lat, 50),
    p99Ms: percentile(lat, 99),
    maxMs: lat.at(-1) ?? 0,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const texts = (await loadQueries(dataset.queryFormat, dataset.queries)).map((q) => q.text);

/** 5 s of load to warm up, then the measured load, left running `steadyS` seconds after `t0`. */
async function warmedLoad(url: string): Promise<{ d: ReturnType<typeof drive>; t0: number }> {
  const warm = drive(url, texts);
  await sleep(5000);
  await warm.stop();
  const d = drive(url, texts);
  const t0 = performance.now();
  await sleep(steadyS * 1000);
  return { d, t0 };
}

/** Warm up, then `steadyS` seconds measured. */
async function steady(srv: BenchServer) {
  const { d, t0 } = await warmedLoad(srv.url);
  const t1 = performance.now();
  await d.stop();
  return { ...stretch(d.samples, t0, t1), rssMiB: rssOf(srv.pid) };
}

const embeddedSrv = await startServer(['--corpus', dataset.name, '--index-dir', indexDir, '--cache-size', '0']);
const embedded = await steady(embeddedSrv);
await embeddedSrv.stop();
log.info(`embedded: ${embedded.qps.toFixed(0)} QPS, p99 ${embedded.p99Ms.toFixed(0)} ms`);

const cluster = await startCluster({ nodes: 3 });
try {
  const client = connectEngine({ nodes: cluster.urls });
  const push = await pushCorpus(client, { indexDir, name: dataset.name, shards: 3, replicas: 1, progress: false, log });
  const chunks = push.chunks;
  const srv = await startServer(['--corpus', dataset.name, '--backend', cluster.urls.join(','), '--cache-size', '0']);
  const { d, t0 } = await warmedLoad(srv.url);
  const victim = await managerIndex(cluster);
  const kill = performance.now();
  await cluster.kill(victim);
  await sleep(afterS * 1000);
  // the node comes back on its data; the load runs on
  const restartAt = performance.now();
  await cluster.restart(victim);
  const green = performance.now();
  await sleep(backS * 1000);
  const end = performance.now();
  await d.stop();
  const rss = rssOf(srv.pid);
  await srv.stop();
  const health = await clusterHealth(cluster.urls);
  const count = await connectEngine({ nodes: cluster.urls }).request<{ count: number }>({
    method: 'GET',
    path: `/${aliasFor(dataset.name)}/_count`,
  });
  await client.close();

  const before = stretch(d.samples, t0, kill);
  // the longest stretch after the kill in which no request was answered
  const ends = d.samples
    .filter((s) => s.end >= kill)
    .map((s) => s.end)
    .sort((a, b) => a - b);
  let gap = ends.length > 0 ? (ends[0] as number) - kill : afterS * 1000;
  for (let i = 1; i < ends.length; i++) gap = Math.max(gap, (ends[i] as number) - (ends[i - 1] as number));
  // answers per second, from the start of the steady stretch; second 0 starts at the kill
  const timeline: Array<{ second: number; qps: number }> = [];
  for (let t = -Math.floor((kill - t0) / 1000); t < Math.floor((end - kill) / 1000); t++) {
    timeline.push({ second: t, qps: stretch(d.samples, kill + t * 1000, kill + (t + 1) * 1000).qps });
  }
  // throughput back: the end of the first 3-second window after the kill averaging ≥ 80% of the steady rate
  let recoveredS: number | null = null;
  const after = timeline.filter((x) => x.second >= 0);
  for (let i = 2; i < after.length; i++) {
    const mean = ((after[i]?.qps ?? 0) + (after[i - 1]?.qps ?? 0) + (after[i - 2]?.qps ?? 0)) / 3;
    if (mean >= 0.8 * before.qps) {
      recoveredS = i + 1;
      break;
    }
  }
  const result = {
    dataset: dataset.name,
    model,
    chunks,
    clients,
    engine: 'OpenSearch 2.19.1 + k-NN 2.19.1.0, 3 nodes (512 MiB heap each), 3 shards, 1 replica',
    killed: `the elected cluster manager (${cluster.nodes[victim]?.name}), SIGKILL`,
    embedded,
    engineServerRssMiB: rss,
    before,
    firstTenSeconds: stretch(d.samples, kill, kill + 10_000),
    rest: stretch(d.samples, kill + 10_000, restartAt),
    restarting: stretch(d.samples, restartAt, green),
    back: stretch(d.samples, green, end),
    greenAfterRestartS: (green - restartAt) / 1000,
    longestSilenceMs: gap,
    recoveredAfterS: recoveredS,
    timeline,
    errors: d.errors,
    clusterAfter: { status: health.status, nodes: health.number_of_nodes },
    chunksAfter: count.body.count,
  };
  log.info(JSON.stringify(result));
  writeResult('engine-failover', result);
} finally {
  await cluster.stop();
}

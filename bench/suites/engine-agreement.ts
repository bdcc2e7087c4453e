/**
 * Same answers from the engine backend as from local files: every shared data
 * set's real-model index is pushed to a three-node OpenSearch cluster (3
 * shards, 1 replica), and every query runs in each mode on both backends.
 * Reports overlap@10 and each metric on both (judged against the same local
 * chunk texts), the push time, and the time per query one at a time.
 *
 *   npm run build:bench
 *   npm run bench -- engine-agreement [--model all-MiniLM-L6-v2] [--datasets 2wiki,multihop]
 *
 * Needs the indexes quality-real.ts builds (bench/data/real-indexes/MODEL).
 * Writes bench/results/engine-agreement.json.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { connectEngine } from '../../src/engine/opensearch/client.js';
import { openEngineCorpus } from '../../src/engine/opensearch/engine-corpus.js';
import { pushCorpus } from '../../src/engine/opensearch/push.js';
import { loadQueries } from '../../src/eval/queries.js';
import { createJudge } from '../../src/eval/run-eval.js';
import type { Retriever } from '../../src/search/retriever.js';
import type { SearchHit } from '../../src/search/types.js';
import { createLogger } from '../../src/util/log.js';
import { arg, BENCH_DATA, writeResult } from '../lib/common.js';
import { DATASETS } from '../lib/datasets.js';
import { startCluster } from '../../test/helpers/opensearch-cluster.js';
import { benchRetriever, openBenchCorpus, openManifestEncoder } from '../lib/retriever.js';

const model = arg('model', 'all-MiniLM-L6-v2') as string;
const indexDir = join(BENCH_DATA, 'real-indexes', model);
const datasets = arg('datasets') ? DATASETS.filter((d) => arg('datasets')!.split(',').includes(d.name)) : DATASETS;
const MODES = ['bm25', 'dense', 'hybrid'] as const;
const KS = [1, 3, 5, 10];
const log = createLogger('info');

for (const d of datasets) {
  if (!existsSync(join(indexDir, d.name, 'manifest.json'))) {
    throw new Error(`no ${indexDir}/${d.name}: run npm run bench -- quality-real --model ${model} first`);
  }
}

const cluster = await startCluster({ nodes: 3 });
const rows: Record<string, unknown>[] = [];
try {
  for (const d of datasets) {
    const client = connectEngine({ nodes: cluster.urls });
    const push = await pushCorpus(client, {
      indexDir,
      name: d.name,
      shards: 3,
      replicas: 1,
      progress: false,
      log,
    });
    await client.close();
    const local = openBenchCorpus(indexDir, d.name);
    const engine = await openEngineCorpus(connectEngine({ nodes: cluster.urls }), d.name, undefined);
    const encoder = await openManifestEncoder(local.manifest.dense!);
    try {
      const queries = await loadQueries(d.queryFormat, d.queries);
      const judge = createJudge(local.store, local.manifest.corpus.chunks, { ks: KS, evidenceThreshold: 0.7 });
      const docLevel = d.queryFormat === 'multihop' && local.manifest.corpus.chunks > local.manifest.corpus.documents;
      const depth = docLevel ? 50 : 10;
      const texts = queries.map((q) => q.text);
      const modes: Record<string, unknown> = {};
      for (const mode of MODES) {
        const a = await run(benchRetriever(local, encoder, depth), texts, mode, depth);
        const b = await run(benchRetriever(engine, encoder, depth), texts, mode, depth);
        let overlap = 0;
        for (const [i, list] of a.lists.entries()) {
          const top = list.slice(0, 10);
          const ids = new Set(top.map((h) => h.id));
          overlap += (b.lists[i] ?? []).slice(0, 10).filter((h) => ids.has(h.id)).length / Math.max(1, top.length);
        }
        modes[mode] = {
          overlap10: overlap / texts.length,
          local: judge.rows(mode, queries, a.lists)[0]!.metrics,
          engine: judge.rows(mode, queries, b.lists)[0]!.metrics,
          localMsPerQuery: a.msPerQuery,
          engineMsPerQuery: b.msPerQuery,
        };
        log.info(`${d.name} ${mode}: overlap@10 ${(overlap / texts.length).toFixed(3)}`);
      }
      rows.push({
        dataset: d.name,
        chunks: local.manifest.corpus.chunks,
        queries: queries.length,
        pushSeconds: push.seconds,
        modes,
      });
    } finally {
      await encoder.close();
      local.close();
      await engine.close();
    }
  }
} finally {
  await cluster.stop();
}
writeResult('engine-agreement', {
  model,
  engine: 'OpenSearch 2.19.1 + k-NN 2.19.1.0 (Lucene HNSW), 3 nodes, 3 shards, 1 replica',
  ks: KS,
  datasets: rows,
});

/** Every query in `mode`, one at a time; the time includes encoding the query, the same on both backends. */
async function run(
  r: Retriever,
  texts: string[],
  mode: (typeof MODES)[number],
  topK: number,
): Promise<{ lists: SearchHit[][]; msPerQuery: number }> {
  const lists: SearchHit[][] = [];
  const t0 = performance.now();
  for (const q of texts) {
    const [res] = await r.searchMany([q], { topK, mode });
    lists.push(res!.results);
  }
  return { lists, msPerQuery: (performance.now() - t0) / texts.length };
}

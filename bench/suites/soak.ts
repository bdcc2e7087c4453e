/**
 * Soak: steady load for `seconds` (default 600) against hybrid search on a
 * 100k-chunk index with the tiny e5 (a fast encoder, so many requests and
 * allocations), result cache small enough to churn. Samples the server's
 * resident memory every 30 s: it must stay flat.
 *
 *   npm run bench -- soak [--seconds 600 --connections 32]
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { arg, BENCH_DATA, printTable, SHARED, writeResult } from '../lib/common.js';
import { buildWiki18Index } from '../lib/child.js';
import { loadRealQuestions } from '../lib/queries.js';
import { ensureVectors } from '../lib/vectors.js';
import { rssOf, startServer } from '../lib/server.js';
import { runWrk } from '../lib/wrk.js';

const seconds = Number(arg('seconds', '600'));
const connections = Number(arg('connections', '32'));
const indexDir = join(BENCH_DATA, 'soak-indexes');
const model = join(SHARED, 'models/tiny-e5');
if (!existsSync(join(indexDir, 'soak100k', 'manifest.json'))) {
  const vectors = join(BENCH_DATA, 'vec-clustered-100k-32.fbin');
  ensureVectors(vectors, 'clustered', 100_000, 32, 5, true);
  buildWiki18Index('soak100k', join(BENCH_DATA, 'gen-100k.jsonl'), indexDir, [
    '--model-path',
    model,
    '--vectors',
    vectors,
    '--no-progress',
  ]);
}
const srv = await startServer([
  '--corpus',
  'soak100k',
  '--index-dir',
  indexDir,
  '--cache-size',
  '1000',
  '--max-inflight',
  '4096',
]);
const samples: Array<{ t: number; rssMiB: number }> = [{ t: 0, rssMiB: rssOf(srv.pid) }];
const t0 = Date.now();
// wrk runs synchronously, so the load is applied in 30 s slices with an RSS sample after each
const slice = 30;
let requests = 0;
let errors = 0;
for (let done = 0; done < seconds; done += slice) {
  const w = runWrk(
    srv.url,
    '/retrieve',
    loadRealQuestions(),
    '{"queries":[QUERY],"topk":5,"mode":"hybrid"}',
    connections,
    Math.min(slice, seconds - done),
  );
  requests += w.requests;
  errors += w.non2xx + w.socketErrors;
  samples.push({ t: Math.round((Date.now() - t0) / 1000), rssMiB: rssOf(srv.pid) });
}
await srv.stop();
const first = samples.find((s) => s.t >= 60) ?? samples[0];
const last = samples[samples.length - 1];
const rows = [
  {
    seconds,
    connections,
    requests,
    errors,
    'RSS at start MiB': Math.round(samples[0]?.rssMiB ?? 0),
    'RSS after 1 min MiB': Math.round(first?.rssMiB ?? 0),
    'RSS at end MiB': Math.round(last?.rssMiB ?? 0),
    'max RSS MiB': Math.round(Math.max(...samples.map((s) => s.rssMiB))),
  },
];
printTable('Soak: hybrid /retrieve under steady load (tiny e5, 100k chunks, result cache 1,000)', rows);
writeResult('soak', { rows, samples });

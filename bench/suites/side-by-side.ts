/**
 * Servers our users run today, side by side with ours on the same corpus and
 * queries: one load generator (wrk) drives each server in turn at 1, 16, 64
 * and 256 concurrent clients with Search-R1's request shape
 * ({"queries": [q], "topk": 3, "return_scores": true} on /retrieve).
 *
 * This script starts no server. Each is started by hand (BENCHMARKS.md says
 * how) and named here:
 *
 *   npm run bench -- side-by-side --tag enwiki1m-bm25 \
 *     --server ours=http://127.0.0.1:8001,pid=1234,started=1764000000000 \
 *     --server search-r1=http://127.0.0.1:8000,pid=5678,started=1764000000000 [--seconds 30]
 *
 * `started` is the wall clock (ms) at which the server was launched: the
 * script polls until the first answer and reports the time since (or give
 * `first=SECONDS`, measured by hand, when servers had to start one by one
 * before the run). `pid` gives
 * resident memory (VmRSS of the process and its children, after the load).
 * `index=PATH[:PATH…]` gives what the server reads from disk (index files,
 * and a corpus file it loads), summed as its index size; `build=SECONDS`
 * the index build's wall time, measured by hand.
 * Agreement: the share of the first server's top-3 passages (by contents)
 * that each other server also returns, over 200 queries.
 * Writes bench/results/side-by-side-<tag>.json.
 */
import { arg, writeResult } from '../lib/common.js';
import { loadRealQuestions } from '../lib/queries.js';
import { agreement, indexFigures, serverSpecs, treeRssMiB } from '../lib/server.js';
import { runWrk, type WrkResult } from '../lib/wrk.js';

const tag = arg('tag', 'run') as string;
const seconds = Number(arg('seconds', '30'));
const levels = (arg('connections', '1,16,64,256') as string).split(',').map(Number);
const log = (line: string): void => void process.stderr.write(`${line}\n`);

const servers = serverSpecs(process.argv);

const queries = loadRealQuestions();

interface Hit {
  document?: { contents?: string };
  contents?: string;
}

async function retrieve(url: string, q: string): Promise<string[]> {
  const r = await fetch(`${url}/retrieve`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ queries: [q], topk: 3, return_scores: true }),
  });
  if (!r.ok) throw new Error(`${url}/retrieve answered ${r.status}`);
  const body = (await r.json()) as { result: Hit[][] };
  return (body.result[0] ?? []).map((h) => (h.document?.contents ?? h.contents ?? '').trim());
}

const out: Array<Record<string, unknown>> = [];
const reference: string[][] = [];
for (const [si, s] of servers.entries()) {
  // the first answer, counted from the launch
  let firstAnswerS: number | null = s.first ?? null;
  for (;;) {
    try {
      await retrieve(s.url, 'first answer');
      if (s.started !== undefined) firstAnswerS = (Date.now() - s.started) / 1000;
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  log(
    `${s.name}: first answer ${firstAnswerS === null ? '(no start time given)' : `${firstAnswerS.toFixed(1)} s`} after launch`,
  );
  // agreement with the first server, one query at a time
  const hits: string[][] = [];
  for (const q of queries.slice(0, 200)) hits.push(await retrieve(s.url, q));
  if (si === 0) reference.push(...hits);
  const load: Record<string, WrkResult> = {};
  for (const c of levels) {
    load[c] = runWrk(s.url, '/retrieve', queries, '{"queries":[QUERY],"topk":3,"return_scores":true}', c, seconds);
    const w = load[c] as WrkResult;
    log(
      `${s.name} @${c}: ${w.rps.toFixed(0)} QPS, p50 ${w.p50ms.toFixed(1)} ms, p99 ${w.p99ms.toFixed(1)} ms, errors ${w.non2xx + w.socketErrors}`,
    );
  }
  out.push({
    name: s.name,
    first_answer_s: firstAnswerS,
    rss_mib: s.pid !== undefined ? treeRssMiB(s.pid) : null,
    ...indexFigures(s),
    agreement_top3: agreement(reference, hits),
    load,
  });
}
writeResult(`side-by-side-${tag}`, {
  seconds,
  request: 'Search-R1 /retrieve, topk 3, one query per request',
  servers: out,
});

/**
 * MCP servers side by side, the way an agent framework reaches them: over
 * legacy SSE (FastMCP's transport, what DeepSearch-RL serves and verl's MCP
 * tool speaks), one MCP session per concurrent client, one tool call at a
 * time per session. Drives each server in turn at 1, 16, 64 and 256 clients,
 * then judges every query of a shared data set once through each server's
 * tool against the same local chunk texts.
 *
 * Starts no server: each is started by hand (BENCHMARKS.md says how) and named:
 *
 *   npm run bench -- mcp-side-by-side --tag 2wiki --dataset 2wiki \
 *     --server ours=http://127.0.0.1:8097/sse,tool=search,pid=1234,started=1764000000000 \
 *     --server deepsearch-rl=http://127.0.0.1:8098/sse,tool=retrieve,pid=5678,first=41 [--seconds 20]
 *
 * `--note TEXT` is kept with the result (and in its command line): how the
 * servers were started, their caches, the model each loaded.
 * `index=PATH[:PATH…]` and `build=SECONDS` record the index's size on disk
 * and build time, as in side-by-side.ts.
 * `--first-only` only waits for each server's first answer and prints the
 * seconds since `started` (launch one server at a time to time it alone).
 * `tool=search` calls ours with {query, top_k: 5}; `tool=retrieve` calls
 * DeepSearch-RL's with {query} (its top-k is the server's --top_k, 5 by
 * default). Hits are read from our structured results or from DeepSearch-RL's
 * list of {chunk, chunk_id, score}. Writes bench/results/mcp-side-by-side-<tag>.json.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { join } from 'node:path';
import { loadQueries } from '../../src/eval/queries.js';
import { createJudge } from '../../src/eval/run-eval.js';
import type { SearchHit } from '../../src/search/types.js';
import { percentile } from '../../src/util/percentile.js';
import { arg, BENCH_DATA, writeResult } from '../lib/common.js';
import { DATASETS } from '../lib/datasets.js';
import { openBenchCorpus } from '../lib/retriever.js';
import { agreement, indexFigures, serverSpecs, treeRssMiB, type ServerSpec } from '../lib/server.js';

const tag = arg('tag', 'run') as string;
const dataset = DATASETS.find((d) => d.name === (arg('dataset') ?? '2wiki'))!;
const model = arg('model', 'all-MiniLM-L6-v2') as string;
const seconds = Number(arg('seconds', '20'));
const levels = (arg('connections', '1,16,64,256') as string).split(',').map(Number);
const TOP_K = 5;
const FIRST_ONLY = process.argv.includes('--first-only');
const note = arg('note');
const log = (line: string): void => void process.stderr.write(`${line}\n`);

const servers = serverSpecs(process.argv);
const queries = await loadQueries(dataset.queryFormat, dataset.queries);
const local = openBenchCorpus(join(BENCH_DATA, 'real-indexes', model), dataset.name);

async function connect(s: ServerSpec): Promise<Client> {
  const client = new Client({ name: 'mcp-side-by-side', version: '0' });
  await client.connect(new SSEClientTransport(new URL(s.url)));
  return client;
}

/** One tool call; the chunk ids it returned, in rank order. */
async function call(client: Client, s: ServerSpec, query: string): Promise<string[]> {
  const tool = s.extra['tool'] ?? 'search';
  const args = tool === 'search' ? { query, top_k: TOP_K } : { query };
  const r = (await client.callTool({ name: tool, arguments: args })) as {
    isError?: boolean;
    structuredContent?: Record<string, unknown>;
    content?: Array<{ type: string; text?: string }>;
  };
  if (r.isError) throw new Error(`${s.name}: ${r.content?.[0]?.text ?? 'tool error'}`);
  const sc = r.structuredContent;
  if (sc && Array.isArray(sc['results'])) return (sc['results'] as Array<{ id: string }>).map((h) => h.id);
  // FastMCP wraps a returned list as {"result": [...]}; older versions send one text item per element
  const list =
    sc && Array.isArray(sc['result'])
      ? (sc['result'] as Array<{ chunk_id: string }>)
      : (r.content ?? []).flatMap((c) => {
          const v = JSON.parse(c.text ?? 'null') as unknown;
          return (Array.isArray(v) ? v : [v]) as Array<{ chunk_id: string }>;
        });
  return list.map((h) => String(h.chunk_id));
}

function toHits(ids: string[]): SearchHit[] {
  return ids.flatMap((id, i) => {
    const c = local.store.getChunkById(id);
    return c
      ? [{ rank: i + 1, id: c.id, doc_id: c.docId, title: c.title, text: c.text, contents: c.contents, score: 0 }]
      : [];
  });
}

const judge = createJudge(local.store, local.manifest.corpus.chunks, { ks: [1, 3, 5], evidenceThreshold: 0.7 });
const out: Array<Record<string, unknown>> = [];
const reference: string[][] = [];
for (const [si, s] of servers.entries()) {
  let firstAnswerS: number | null = s.first ?? null;
  for (;;) {
    try {
      const c = await connect(s);
      await call(c, s, 'first answer');
      await c.close();
      if (s.started !== undefined) firstAnswerS = (Date.now() - s.started) / 1000;
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  if (FIRST_ONLY) {
    log(`${s.name}: first answer ${firstAnswerS ?? '?'} s after launch`);
    continue;
  }
  // quality and agreement: every query once, one session
  const one = await connect(s);
  const lists: string[][] = [];
  for (const q of queries) lists.push(await call(one, s, q.text));
  await one.close();
  const quality = judge.rows('hits', queries, lists.map(toHits))[0]!.metrics;
  if (si === 0) reference.push(...lists);
  log(`${s.name}: first answer ${firstAnswerS ?? '?'} s; ${JSON.stringify(quality)}`);
  const load: Record<string, unknown> = {};
  for (const n of levels) {
    const clients = await Promise.all(Array.from({ length: n }, () => connect(s)));
    const lat: number[] = [];
    let errors = 0;
    const firstError: string[] = [];
    const end = performance.now() + seconds * 1000;
    const t0 = performance.now();
    await Promise.all(
      clients.map(async (c, ci) => {
        for (let i = 0; performance.now() < end; i++) {
          const start = performance.now();
          try {
            await call(c, s, queries[(ci * 13 + i) % queries.length]!.text);
            lat.push(performance.now() - start);
          } catch (err) {
            errors++;
            if (firstError.length === 0) firstError.push((err as Error).message.slice(0, 200));
          }
        }
      }),
    );
    const took = (performance.now() - t0) / 1000;
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    lat.sort((a, b) => a - b);
    load[n] = {
      qps: lat.length / took,
      p50ms: percentile(lat, 50),
      p99ms: percentile(lat, 99),
      errors,
      ...(firstError.length > 0 ? { firstError: firstError[0] } : {}),
    };
    log(`${s.name} @${n}: ${JSON.stringify(load[n])}`);
  }
  out.push({
    name: s.name,
    tool: s.extra['tool'] ?? 'search',
    first_answer_s: firstAnswerS,
    rss_mib: s.pid !== undefined ? treeRssMiB(s.pid) : null,
    ...indexFigures(s),
    agreement_top5: agreement(reference, lists),
    quality,
    load,
  });
}
local.close();
if (FIRST_ONLY) process.exit(0);
writeResult(`mcp-side-by-side-${tag}`, {
  dataset: dataset.name,
  model,
  queries: queries.length,
  seconds,
  request: `MCP over SSE, one session per client, one tool call at a time, top ${TOP_K}`,
  ...(note ? { note } : {}),
  servers: out,
});

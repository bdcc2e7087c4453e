/**
 * Memory under the outside probe's patterns, default server options: a
 * BM25 index of 20k passages of 500 words; `--queries` (100k) distinct
 * top-100 /retrieve queries from 16 clients, then the adversarial mix:
 * distinct 100 KB `mode` strings, 100k-deep JSON, stateless requests named
 * notifications/cancelled, MCP initialize past the session cap, silent
 * sockets past the connection cap and 200 MB declared bodies. Samples the
 * server's RSS throughout; it must stay under `--bound-mib` (768).
 *
 *   npm run bench -- memory-soak [--queries 100000]
 */
import { connect } from 'node:net';
import { arg, printTable, writeResult } from '../lib/common.js';
import { ensureLongIndex, makeQueries } from '../lib/long-passages.js';
import { rssOf, startServer } from '../lib/server.js';

const total = Number(arg('queries', '100000'));
const boundMiB = Number(arg('bound-mib', '768'));
const { indexDir, name } = ensureLongIndex(20_000);
const srv = await startServer(['--corpus', name, '--index-dir', indexDir]);
const samples: Array<{ phase: string; done: number; rssMiB: number }> = [];
const sample = (phase: string, done: number): void => {
  samples.push({ phase, done, rssMiB: Math.round(rssOf(srv.pid)) });
};
sample('start', 0);

const post = async (path: string, body: string, headers: Record<string, string> = {}): Promise<number> => {
  const r = await fetch(`${srv.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  await r.arrayBuffer();
  return r.status;
};

// 1. distinct top-100 queries (the result cache's worst case)
const queries = makeQueries(total, 4, 5);
let next = 0;
let failures = 0;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (next < queries.length) {
      const i = next++;
      const status = await post('/retrieve', JSON.stringify({ queries: [queries[i]], topk: 100 }));
      if (status !== 200) failures++;
      if (i % 5000 === 0) sample('distinct top-100', i);
    }
  }),
);
const queryS = (performance.now() - t0) / 1000;
sample('distinct top-100', total);

// 2. the adversarial mix
const statuses = new Map<string, Map<number, number>>();
const count = (what: string, status: number): void => {
  const m = statuses.get(what) ?? new Map<number, number>();
  m.set(status, (m.get(status) ?? 0) + 1);
  statuses.set(what, m);
};
for (let i = 0; i < 5000; i++) {
  const mode = `m${i}${'x'.repeat(100_000)}`;
  count('100 KB modes', await post('/retrieve', JSON.stringify({ queries: ['kalo'], mode })));
}
sample('100 KB modes', 5000);
const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
for (let i = 0; i < 200; i++) count('100k-deep JSON', await post('/retrieve', `{"queries":["kalo"],"topk":${deep}}`));
const mcpHeaders = { accept: 'application/json, text/event-stream' };
for (let i = 0; i < 20_000; i++) {
  const msg = { jsonrpc: '2.0', id: i, method: 'notifications/cancelled', params: { requestId: i } };
  count('cancelled with an id', await post('/mcp', JSON.stringify(msg), mcpHeaders));
}
sample('cancelled with an id', 20_000);
const init = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'soak', version: '0' } },
});
for (let i = 0; i < 10_000; i++) count('initialize', await post('/mcp', init, mcpHeaders));
sample('initialize', 10_000);
const { port } = new URL(srv.url);
const silent = await Promise.all(
  Array.from(
    { length: 6000 },
    () =>
      new Promise<ReturnType<typeof connect>>((resolve) => {
        const s = connect(Number(port), '127.0.0.1', () => resolve(s));
        s.on('error', () => undefined);
      }),
  ),
);
count('health past 6,000 silent sockets', (await fetch(`${srv.url}/health`)).status);
sample('silent sockets', 6000);
for (const s of silent) s.destroy();
for (let i = 0; i < 50; i++) {
  const status = await post('/retrieve', 'x'.repeat(2 ** 20 + 10)).catch(() => 0);
  count('bodies over the limit', status);
}
sample('end', 0);
await srv.stop();

const maxRss = Math.max(...samples.map((s) => s.rssMiB));
const rows = [
  {
    queries: total,
    'non-200 answers': failures,
    'queries/s': Math.round(total / queryS),
    'RSS start MiB': samples[0]?.rssMiB ?? 0,
    'RSS after queries MiB': samples.find((s) => s.phase === 'distinct top-100' && s.done === total)?.rssMiB ?? 0,
    'RSS end MiB': samples[samples.length - 1]?.rssMiB ?? 0,
    'max RSS MiB': maxRss,
    'bound MiB': boundMiB,
    within: maxRss <= boundMiB ? 'yes' : 'NO',
  },
];
printTable('Memory soak: default options, 20k passages of 500 words, BM25', rows);
const answers = [...statuses].map(([what, m]) => ({
  pattern: what,
  answers: [...m].map(([s, n]) => `${n}× ${s}`).join(', '),
}));
printTable('Adversarial patterns: what the server answered', answers);
writeResult('memory-soak', { rows, answers, samples });
if (maxRss > boundMiB) process.exitCode = 1;

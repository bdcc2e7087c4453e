import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyBuildArgs, TINY_MODEL } from '../helpers/encoder.js';
import { startHttpServer, type RunningServer } from '../helpers/http-server.js';
import { runBin } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir, sharedPath } from '../helpers/paths.js';

// Reliability V, item 9: under mixed load no kind of request starves another. Before, 128
// `/retrieve` clients beside 128 MCP `fetch` clients made one call each in 15 s: the SDK's work on
// each fetch ran between two turns of the search queue, unbounded, and a search waited a whole
// round of fetches for each of its steps. Clients here are many short keep-alive loops.
const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'indexes');
let srv: RunningServer;

beforeAll(async () => {
  if (!HAS_SHARED) return;
  const r = runBin(BIN.build, tinyBuildArgs('wiki2', sharedPath('data/2wiki-200/corpus.jsonl'), indexDir, 'wiki18'));
  expect(r.status, r.stderr).toBe(0);
  srv = await startHttpServer([
    ...['--corpus', 'wiki2', '--index-dir', indexDir, '--model-path', TINY_MODEL],
    ...['--cache-size', '0', '--deadline-ms', '60000'],
  ]);
}, 120_000);
afterAll(async () => {
  await srv?.stop();
  tmp.cleanup();
});

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'load', version: '0' },
};

interface Kind {
  path: string;
  headers: Record<string, string>;
  body: (i: number) => string;
}

/** Runs `clients` loops of one kind until `until`; each loop's calls and every latency. */
async function loops(
  url: string,
  kind: Kind,
  clients: number,
  until: number,
): Promise<{ perClient: number[]; ms: number[]; errors: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const ms: number[] = [];
  let errors = 0;
  const one = (i: number): Promise<number> =>
    new Promise((resolve) => {
      const body = kind.body(i);
      const t0 = performance.now();
      const req = request(
        `${url}${kind.path}`,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', ...kind.headers } },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode !== 200) errors++;
            resolve(performance.now() - t0);
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve(performance.now() - t0);
      });
      req.end(body);
    });
  const perClient = await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      let n = 0;
      while (Date.now() < until) ms.push(await one(c * 1000 + n++));
      return n;
    }),
  );
  agent.destroy();
  return { perClient, ms, errors };
}

describe.skipIf(!HAS_SHARED)('mixed load (Reliability V, item 9)', () => {
  it('96 /retrieve clients beside 96 MCP fetch clients: every client of each kind keeps being served', async () => {
    const questions = readFileSync(sharedPath('data/2wiki-200/queries.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { question: string }).question);
    const retrieve: Kind = {
      path: '/retrieve',
      headers: {},
      body: (i) => JSON.stringify({ queries: [questions[i % questions.length]], topk: 3 }),
    };
    const fetchKind: Kind = {
      path: '/mcp',
      headers: {
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'fetch',
      },
      body: (i) =>
        JSON.stringify({
          jsonrpc: '2.0',
          id: i,
          method: 'tools/call',
          params: { name: 'fetch', arguments: { id: String(i % 1500), around: 1 }, _meta: ENVELOPE },
        }),
    };
    const until = Date.now() + 12_000;
    const [r, f] = await Promise.all([loops(srv.url, retrieve, 96, until), loops(srv.url, fetchKind, 96, until)]);
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    process.stderr.write(
      `mixed load: retrieve ${r.ms.length} calls (fewest a client ${Math.min(...r.perClient)}, median ${median(r.ms).toFixed(0)} ms), ` +
        `fetch ${f.ms.length} (fewest ${Math.min(...f.perClient)}, median ${median(f.ms).toFixed(0)} ms)\n`,
    );
    expect(r.errors + f.errors).toBe(0);
    // every client of each kind got several answers: none waited out the run
    expect(Math.min(...r.perClient)).toBeGreaterThanOrEqual(4);
    expect(Math.min(...f.perClient)).toBeGreaterThanOrEqual(4);
    // neither kind is starved: each made at least a fifth as many calls as the other
    expect(r.ms.length).toBeGreaterThan(f.ms.length / 5);
    expect(f.ms.length).toBeGreaterThan(r.ms.length / 5);
    expect(srv.child.exitCode).toBeNull();
  }, 120_000);
});

import { spawn } from 'node:child_process';
import { request } from 'node:http';
import fc from 'fast-check';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeJsonl } from '../helpers/build.js';
import { tinyBuildArgs } from '../helpers/encoder.js';
import { startHttpServer } from '../helpers/http-server.js';
import { runBin } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir } from '../helpers/paths.js';

/**
 * Raw JSON-RPC fuzzing below the client libraries (Reliability III): random
 * messages, ids of every JSON type, params of every JSON type, batches and
 * non-JSON lines, straight onto stdio and POST /mcp, and random bodies onto
 * every REST route. The server must answer every request whose id it can
 * read with that id, write only JSON lines to stdout, never answer 500 to
 * bad input, and never die. FUZZ_RUNS raises the count.
 */
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 2000);
const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'idx');

const methods = fc.constantFrom(
  'initialize',
  'tools/list',
  'tools/call',
  'resources/list',
  'prompts/list',
  'ping',
  'logging/setLevel',
  'completion/complete',
  'notifications/initialized',
  'notifications/cancelled',
  'server/discover',
  'nope',
  '',
  // names every plain object answers without owning them (`toString` once ended the server)
  ...Object.getOwnPropertyNames(Object.prototype),
);
const anyJson = fc.jsonValue({ maxDepth: 3 });
const toolArgs = fc.dictionary(
  fc.constantFrom(
    'query',
    'queries',
    'top_k',
    'mode',
    'corpus',
    'filter',
    'ids',
    'id',
    'doc_id',
    'around',
    'position',
    'k',
    '__proto__',
    'constructor',
  ),
  anyJson,
  { maxKeys: 5 },
);
const params = fc.oneof(
  anyJson,
  fc.record({
    name: fc.constantFrom(
      'search',
      'batch_search',
      'fetch',
      'list_corpora',
      'x',
      ...Object.getOwnPropertyNames(Object.prototype),
    ),
    arguments: fc.oneof(toolArgs, anyJson),
  }),
  fc.record(
    {
      protocolVersion: fc.oneof(fc.constantFrom('2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'), anyJson),
      capabilities: anyJson,
      clientInfo: anyJson,
    },
    { requiredKeys: [] },
  ),
);
const message = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), anyJson),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), anyJson),
    method: fc.oneof(methods, anyJson),
    params,
  },
  { requiredKeys: [] },
);
const line = fc.oneof(
  { weight: 8, arbitrary: message.map((m) => JSON.stringify(m)) },
  { weight: 1, arbitrary: fc.array(message, { maxLength: 4 }).map((b) => JSON.stringify(b)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map((s) => s.replace(/\n/g, ' ')) },
);

/** The id a well-formed request carries (a string or a finite number with a string method), else undefined. */
function requestId(raw: string): Array<string | number> {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return [];
  }
  const items = Array.isArray(v) ? v : [v];
  return items.flatMap((m) => {
    if (typeof m !== 'object' || m === null) return [];
    const { id, method } = m as { id?: unknown; method?: unknown };
    if (typeof method !== 'string') return [];
    return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? [id] : [];
  });
}

describe.skipIf(!HAS_SHARED)('raw JSON-RPC and REST fuzzing', () => {
  beforeAll(() => {
    const input = writeJsonl(
      tmp.dir,
      'c.jsonl',
      Array.from({ length: 100 }, (_, i) => ({ id: String(i), contents: `"T${i}"\nfuzz target text ${i}` })),
    );
    expect(runBin(BIN.build, tinyBuildArgs('c', input, indexDir)).status).toBe(0);
  });
  afterAll(tmp.cleanup);

  it(`stdio: ${RUNS} random lines, every readable request answered with its id, stdout only JSON`, async () => {
    const lines = fc.sample(line, { numRuns: RUNS, seed: 7 });
    const child = spawn(process.execPath, [BIN.server, '--corpus', 'c', '--index-dir', indexDir]);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const expected = new Set<string>();
    for (const l of lines) for (const id of requestId(l)) expected.add(JSON.stringify(id));
    // ids repeat across random messages: one answer per distinct id is what can be checked
    for (const l of lines) child.stdin.write(`${l}\n`);
    const answered = new Set<string>();
    const t0 = Date.now();
    while ([...expected].some((id) => !answered.has(id)) && Date.now() - t0 < 120_000 && child.exitCode === null) {
      await new Promise((r) => setTimeout(r, 100));
      for (const l of out.split('\n').filter((x) => x !== '')) {
        const m = JSON.parse(l) as { id?: unknown }; // stdout holds JSON lines and nothing else
        if (m.id !== undefined && m.id !== null) answered.add(JSON.stringify(m.id));
      }
    }
    expect(expected.size).toBeGreaterThan(RUNS / 20);
    expect(child.exitCode, err.slice(-2000)).toBeNull();
    expect([...expected].filter((id) => !answered.has(id))).toEqual([]);
    child.kill();
  }, 180_000);

  it(`HTTP: ${RUNS} random messages on /mcp and bodies on the REST routes, no 500, no crash`, async () => {
    const s = await startHttpServer(['--corpus', 'c', '--index-dir', indexDir]);
    const statuses = new Map<number, number>();
    const routes = ['/mcp', '/retrieve', '/search', '/batch_search', '/messages'];
    const bodies = fc.sample(
      fc.record({
        route: fc.constantFrom(...routes),
        body: fc.oneof(
          line,
          anyJson.map((v) => JSON.stringify(v)),
        ),
      }),
      { numRuns: RUNS, seed: 11 },
    );
    try {
      for (let i = 0; i < bodies.length; i += 16) {
        await Promise.all(
          bodies.slice(i, i + 16).map(async ({ route, body }) => {
            const r = await fetch(`${s.url}${route}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
              body,
            });
            await r.text();
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
            expect(r.status, `${route} ${body.slice(0, 200)}`).not.toBe(500);
          }),
        );
      }
      expect((await fetch(`${s.url}/health`)).status).toBe(200);
      expect(s.child.exitCode).toBeNull();
    } finally {
      await s.stop();
    }
    process.stderr.write(`fuzz-raw http statuses: ${JSON.stringify(Object.fromEntries(statuses))}\n`);
  }, 300_000);

  it(`legacy SSE: ${RUNS / 4} random messages in one session, every readable request answered, no 500`, async () => {
    const s = await startHttpServer(['--corpus', 'c', '--index-dir', indexDir]);
    const answered = new Set<string>();
    let buf = '';
    let endpoint = '';
    const stream = request(`${s.url}/sse`, { headers: { accept: 'text/event-stream' } });
    try {
      await new Promise<void>((resolve, reject) => {
        stream.on('response', (res) => {
          res.on('data', (d: Buffer) => {
            buf += d.toString();
            let end: number;
            while ((end = buf.indexOf('\n\n')) !== -1) {
              const event = buf.slice(0, end);
              buf = buf.slice(end + 2);
              const data = /^data: (.*)$/m.exec(event)?.[1] ?? '';
              if (event.startsWith('event: endpoint')) {
                endpoint = data;
                resolve();
              } else if (event.startsWith('event: message')) {
                const m = JSON.parse(data) as { id?: unknown };
                if (m.id !== undefined && m.id !== null) answered.add(JSON.stringify(m.id));
              }
            }
          });
        });
        stream.on('error', reject);
        stream.end();
      });
      // one message per POST (a legacy session takes no batches); ids made distinct per message
      const messages = fc.sample(message, { numRuns: RUNS / 4, seed: 13 }).map((m, i) => ({ ...m, id: `f${i}` }));
      const expected = new Set<string>();
      for (const m of messages) {
        const body = JSON.stringify(m);
        const r = await fetch(`${s.url}${endpoint}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        const text = await r.text();
        expect(r.status, `${body.slice(0, 200)}: ${text.slice(0, 200)}`).not.toBe(500);
        if (r.status === 202 && requestId(body).length > 0) expected.add(JSON.stringify(m.id));
      }
      for (let i = 0; i < 600 && [...expected].some((id) => !answered.has(id)); i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(expected.size).toBeGreaterThan(RUNS / 40);
      expect([...expected].filter((id) => !answered.has(id))).toEqual([]);
      expect(s.child.exitCode).toBeNull();
      expect(s.stderr()).not.toMatch(/unhandled|TypeError/);
    } finally {
      stream.destroy();
      await s.stop();
    }
  }, 300_000);
});

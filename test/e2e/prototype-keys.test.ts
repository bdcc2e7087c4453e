import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, writeJsonl } from '../helpers/build.js';
import { postJson, startHttpServer, type RunningServer } from '../helpers/http-server.js';
import { BIN, makeTempDir } from '../helpers/paths.js';

// Reliability V, items 1 and 13: every name a plain object answers without owning it, sent as a
// method and as a tool name, in both eras, over stdio, Streamable HTTP and legacy SSE. One
// `{"method":"toString"}` line ended the server (its screening looked the method up in a plain
// object); the SDK called a tool named `toString` "disabled".
const KEYS = Object.getOwnPropertyNames(Object.prototype);
const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'indexes');
let srv: RunningServer;

interface Answer {
  id: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 't', version: '0' },
};
const INIT = {
  jsonrpc: '2.0',
  id: 'init',
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
};

/** The requests of one era: each key as a method, then as a tool's name. */
function probes(
  era: '2025' | '2026',
  base: number,
): Array<{ id: number; kind: 'method' | 'tool'; key: string; m: unknown }> {
  const meta = era === '2026' ? { _meta: ENVELOPE } : {};
  return KEYS.flatMap((key, i) => [
    {
      id: base + 2 * i,
      kind: 'method' as const,
      key,
      m: { jsonrpc: '2.0', id: base + 2 * i, method: key, params: meta },
    },
    {
      id: base + 2 * i + 1,
      kind: 'tool' as const,
      key,
      m: { jsonrpc: '2.0', id: base + 2 * i + 1, method: 'tools/call', params: { name: key, arguments: {}, ...meta } },
    },
  ]);
}

function expectRefused(a: Answer | undefined, p: { kind: 'method' | 'tool'; key: string }): void {
  expect(a, `${p.kind} ${p.key}`).toBeDefined();
  if (p.kind === 'method') expect(a?.error, `${p.key}: ${JSON.stringify(a)}`).toMatchObject({ code: -32601 });
  else
    expect(a?.error, `${p.key}: ${JSON.stringify(a)}`).toMatchObject({
      code: -32602,
      message: `Tool ${p.key} not found`,
    });
}

beforeAll(async () => {
  const input = writeJsonl(tmp.dir, 'w.jsonl', [
    { id: 'a', contents: '"Rivers"\nThe Danube flows east.' },
    { id: 'b', contents: '"Kings"\nA king reigned long.' },
  ]);
  await build({ name: 'w', input, format: 'wiki18', indexDir });
  srv = await startHttpServer(['--corpus', 'w', '--index-dir', indexDir]);
});
afterAll(async () => {
  await srv?.stop();
  tmp.cleanup();
});

describe('Object.prototype keys as method and tool names (Reliability V, item 1)', () => {
  it('stdio: before initialize, after it, and in the 2026 envelope, each is refused and the server lives', async () => {
    const child = spawn(process.execPath, [BIN.server, '--corpus', 'w', '--index-dir', indexDir]);
    const answers = new Map<unknown, Answer>();
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      let nl: number;
      while ((nl = out.indexOf('\n')) !== -1) {
        const a = JSON.parse(out.slice(0, nl)) as Answer;
        answers.set(a.id, a);
        out = out.slice(nl + 1);
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    try {
      const before = probes('2025', 1000);
      const after = probes('2025', 2000);
      const modern = probes('2026', 3000);
      for (const p of before) send(p.m);
      send(INIT);
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      for (const p of [...after, ...modern]) send(p.m);
      send({ jsonrpc: '2.0', id: 'last', method: 'tools/list', params: {} });
      for (let i = 0; i < 600 && !answers.has('last') && child.exitCode === null; i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(child.exitCode, err.slice(-1500)).toBeNull();
      expect(answers.get('last')?.result?.['tools']).toHaveLength(4);
      for (const p of [...before, ...after, ...modern]) expectRefused(answers.get(p.id), p);
      expect(err).not.toMatch(/TypeError|at .*\.js:\d+/);
    } finally {
      child.kill();
    }
  });

  it('HTTP /mcp: 2025 stateless, a 2025 session and 2026, each refused with its id, never 500', async () => {
    const mcp = `${srv.url}/mcp`;
    const accept = { accept: 'application/json, text/event-stream' };
    const init = await postJson(mcp, INIT, accept);
    const session = { ...accept, 'mcp-session-id': init.headers.get('mcp-session-id') as string };
    const cases: Array<[string, ReturnType<typeof probes>, (m: string, name?: string) => Record<string, string>]> = [
      ['2025 stateless', probes('2025', 1000), () => accept],
      ['2025 session', probes('2025', 2000), () => ({ ...session, 'mcp-protocol-version': '2025-11-25' })],
      [
        '2026',
        probes('2026', 3000),
        (method, name) => ({
          ...accept,
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': method,
          ...(name !== undefined ? { 'mcp-name': name } : {}),
        }),
      ],
    ];
    for (const [label, list, headers] of cases) {
      for (const p of list) {
        const method = p.kind === 'method' ? p.key : 'tools/call';
        const r = await postJson(mcp, p.m, headers(method, p.kind === 'tool' ? p.key : undefined));
        expect(r.status, `${label} ${p.kind} ${p.key}: ${r.text}`).not.toBe(500);
        const a = (r.json as unknown as Answer | undefined) ?? parseSse(r.text);
        expect(a?.id, `${label} ${p.key}`).toBe(p.id);
        expectRefused(a, p);
      }
    }
    expect(srv.stderr()).not.toMatch(/unhandled|TypeError/);
    expect((await fetch(`${srv.url}/health`)).status).toBe(200);
  });

  it('legacy SSE: each is refused on the stream, and a 2026 request gets -32022 naming 2025 (item 13)', async () => {
    const sse = await openSse(srv.url);
    try {
      const list = probes('2025', 1000);
      for (const p of list) {
        const r = await postJson(`${srv.url}${sse.endpoint}`, p.m);
        expect(r.status, r.text).toBe(202);
      }
      const discover = { jsonrpc: '2.0', id: 'disc', method: 'server/discover', params: { _meta: ENVELOPE } };
      expect((await postJson(`${srv.url}${sse.endpoint}`, discover)).status).toBe(202);
      const call = {
        jsonrpc: '2.0',
        id: 'call',
        method: 'tools/call',
        params: { name: 'search', arguments: { query: 'king' }, _meta: ENVELOPE },
      };
      expect((await postJson(`${srv.url}${sse.endpoint}`, call)).status).toBe(202);
      const answers = await sse.until(list.length + 2);
      for (const p of list) expectRefused(answers.get(p.id), p);
      for (const id of ['disc', 'call']) {
        const a = answers.get(id);
        expect(a?.error?.code, JSON.stringify(a)).toBe(-32022);
        expect(a?.error?.data).toMatchObject({
          supported: expect.arrayContaining(['2025-11-25']),
          requested: '2026-07-28',
        });
        expect(a?.result).toBeUndefined();
      }
    } finally {
      sse.close();
    }
  });
});

function parseSse(text: string): Answer | undefined {
  const data = /^data: (.*)$/m.exec(text)?.[1];
  return data ? (JSON.parse(data) as Answer) : undefined;
}

/** A raw legacy SSE session: its endpoint, and the answers its stream carried. */
async function openSse(url: string): Promise<{
  endpoint: string;
  until: (n: number) => Promise<Map<unknown, Answer>>;
  close: () => void;
}> {
  const answers = new Map<unknown, Answer>();
  let buf = '';
  let endpoint = '';
  const req = request(`${url}/sse`, { headers: { accept: 'text/event-stream' } });
  await new Promise<void>((resolve, reject) => {
    req.on('response', (res) => {
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
            const a = JSON.parse(data) as Answer;
            answers.set(a.id, a);
          }
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
  return {
    endpoint,
    until: async (n) => {
      for (let i = 0; i < 600 && answers.size < n; i++) await new Promise((r) => setTimeout(r, 50));
      return answers;
    },
    close: () => req.destroy(),
  };
}

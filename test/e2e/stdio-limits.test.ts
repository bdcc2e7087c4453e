import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, writeJsonl } from '../helpers/build.js';
import { BIN, makeTempDir } from '../helpers/paths.js';

// The stdio transport under the outside probe's two patterns: one line over the 10 MiB limit (the
// SDK's transport ended the server with exit 0 and no word), and a burst of 5,000 requests written
// at once (78% were refused "limit of 1024 in flight", with MaxListenersExceededWarning).
const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'indexes');

beforeAll(async () => {
  const passages = Array.from({ length: 30 }, (_, i) => ({
    id: `p${i}`,
    contents: `"Topic ${i}"\nParagraph ${i} is about ${['rivers', 'kings', 'films'][i % 3]} and the number ${i}.`,
  }));
  await build({ name: 'w', input: writeJsonl(tmp.dir, 'w.jsonl', passages), format: 'wiki18', indexDir });
});
afterAll(tmp.cleanup);

interface Session {
  child: ChildProcessWithoutNullStreams;
  lines: Array<Record<string, unknown>>;
  stderr: () => string;
  send: (msg: unknown) => void;
  waitFor: (pred: (lines: Array<Record<string, unknown>>) => boolean, ms?: number) => Promise<void>;
}

function startStdio(): Session {
  const child = spawn(process.execPath, [BIN.server, '--corpus', 'w', '--index-dir', indexDir]);
  const lines: Array<Record<string, unknown>> = [];
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    let nl: number;
    while ((nl = out.indexOf('\n')) !== -1) {
      lines.push(JSON.parse(out.slice(0, nl)) as Record<string, unknown>);
      out = out.slice(nl + 1);
    }
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const waitFor = async (pred: (l: typeof lines) => boolean, ms = 60_000): Promise<void> => {
    const t0 = Date.now();
    while (!pred(lines)) {
      if (Date.now() - t0 > ms) throw new Error(`timed out; ${lines.length} lines; stderr: ${err.slice(-500)}`);
      if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}: ${err.slice(-500)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { child, lines, stderr: () => err, send: (m) => child.stdin.write(`${JSON.stringify(m)}\n`), waitFor };
}

async function initialize(s: Session): Promise<void> {
  s.send({
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '0' } },
  });
  await s.waitFor((l) => l.some((m) => m['id'] === 'init'));
  s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

const search = (id: number, query: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'search', arguments: { query, top_k: 2 } },
});

describe('stdio transport limits', () => {
  it('answers a line over 10 MiB with an error and keeps serving', async () => {
    const s = startStdio();
    try {
      await initialize(s);
      const huge = JSON.stringify(search(1, 'x'.repeat(11 * 2 ** 20)));
      s.child.stdin.write(`${huge}\n`);
      s.send(search(2, 'rivers'));
      await s.waitFor((l) => l.some((m) => m['id'] === 2));
      const refusal = s.lines.find((m) => m['id'] === null) as { error: { code: number; message: string } };
      expect(refusal.error.message).toMatch(/over the limit of 10485760 bytes/);
      const ok = s.lines.find((m) => m['id'] === 2) as { result: { isError?: boolean } };
      expect(ok.result.isError).toBeFalsy();
      expect(s.stderr()).toMatch(/over the limit/);
      s.child.stdin.write('{ not json\n');
      await s.waitFor((l) => l.some((m) => (m['error'] as { code?: number } | undefined)?.code === -32700));
      expect(s.child.exitCode).toBeNull();
    } finally {
      s.child.kill();
    }
  });

  it('slows a burst of 5,000 requests instead of refusing them', async () => {
    const s = startStdio();
    try {
      await initialize(s);
      const words = ['rivers', 'kings', 'films'];
      s.child.stdin.write(
        Array.from({ length: 5000 }, (_, i) => `${JSON.stringify(search(i, `${words[i % 3]} ${i}`))}\n`).join(''),
      );
      await s.waitFor((l) => l.filter((m) => typeof m['id'] === 'number').length === 5000, 120_000);
      const refused = s.lines.filter((m) => {
        const r = m['result'] as { isError?: boolean } | undefined;
        return m['error'] !== undefined || r?.isError === true;
      });
      expect(refused).toHaveLength(0);
      expect(s.stderr()).not.toMatch(/MaxListenersExceededWarning/);
    } finally {
      s.child.kill();
    }
  }, 180_000);

  it('answers an invalid message with -32600 and its own id, and takes a batch apart (item 23)', async () => {
    const s = startStdio();
    try {
      await initialize(s);
      // JSON, with a readable id, but not JSON-RPC 2.0: before, -32700 "Parse error" with id null
      s.child.stdin.write(`${JSON.stringify({ jsonrpc: '1.0', id: 'old', method: 'tools/list' })}\n`);
      s.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 42 })}\n`);
      // a batch: each message answered, on its own line
      s.child.stdin.write(
        `${JSON.stringify([search(11, 'rivers'), { jsonrpc: '2.0', id: 12, params: 5, method: 'x' }])}\n`,
      );
      s.child.stdin.write('[]\n');
      await s.waitFor((l) => ['old', 7, 11, 12].every((id) => l.some((m) => m['id'] === id)));
      const byId = (id: unknown) =>
        s.lines.find((m) => m['id'] === id) as { error?: { code: number; message: string } };
      expect(byId('old').error).toMatchObject({
        code: -32600,
        message: expect.stringMatching(/"jsonrpc" must be "2.0"/),
      });
      expect(byId(7).error).toMatchObject({
        code: -32600,
        message: expect.stringMatching(/"method" must be a string/),
      });
      expect(byId(11).error).toBeUndefined();
      expect(byId(12).error).toMatchObject({
        code: -32600,
        message: expect.stringMatching(/"params" must be an object/),
      });
      await s.waitFor((l) => l.some((m) => m['id'] === null && /empty JSON-RPC batch/.test(JSON.stringify(m))));
      expect(s.lines.filter((m) => (m['error'] as { code?: number } | undefined)?.code === -32700)).toEqual([]);
      expect(s.child.exitCode).toBeNull();
    } finally {
      s.child.kill();
    }
  });
});

import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bm25BuildArgs, writeJsonl } from '../helpers/build.js';
import { makeLongPassages } from '../helpers/long-passages.js';
import { postJson, startHttpServer, type RunningServer } from '../helpers/http-server.js';
import { runBin, runBinAsync } from '../helpers/mcp.js';
import { BIN, makeTempDir } from '../helpers/paths.js';

// Reliability III, items 18, 20 and 25: half-closed requests, the result cache's budget against the
// heap the process has, and the address a server says it listens on.
const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'indexes');

beforeAll(() => {
  // 500-word passages: a top-100 answer is ~0.6 MB, the size that filled the cache past the heap
  const input = writeJsonl(tmp.dir, 'long.jsonl', makeLongPassages(3000, 500));
  const r = runBin(BIN.build, bm25BuildArgs('c', input, indexDir));
  expect(r.status, r.stderr).toBe(0);
}, 120_000);
afterAll(tmp.cleanup);

/** Sends `request` raw, then half-closes (shutdown(SHUT_WR), as `nc -N` does); resolves with all it got back. */
function sendAndHalfClose(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname, () => s.end(request));
    let got = '';
    s.on('data', (d: Buffer) => (got += d.toString()));
    s.on('end', () => resolve(got));
    s.on('error', reject);
    s.setTimeout(30_000, () => reject(new Error(`no answer within 30 s: ${got}`)));
  });
}

describe('HTTP edges', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startHttpServer(['--corpus', 'c', '--index-dir', indexDir, '--cache-size', '0']);
  });
  afterAll(async () => server?.stop());

  it('answers a request whose sender half-closed the connection (before: no answer for an uncached search)', async () => {
    const body = JSON.stringify({ queries: ['kalo miren tasvo'], topk: 2 });
    const answer = await sendAndHalfClose(
      server.url,
      `POST /retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(answer).toMatch(/"result":\[\[\{"id":/);
    // an HTTP/1.0-style request without a length, the same way
    const old = await sendAndHalfClose(server.url, 'GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n');
    expect(old).toMatch(/^HTTP\/1\.1 200 OK/);
  });
});

describe('the result cache fits the heap the process has', () => {
  it('a 192 MB heap gets a cache it can hold, and survives distinct top-100 answers and large batches', async () => {
    const s = await startHttpServer(['--corpus', 'c', '--index-dir', indexDir, '--log-level', 'debug'], {
      NODE_OPTIONS: '--max-old-space-size=192',
    });
    try {
      expect(s.stderr()).toMatch(/result cache: up to (\d+) MiB \(a quarter of this process's \d+ MiB heap/);
      const mb = Number(/result cache: up to (\d+) MiB/.exec(s.stderr())?.[1]);
      expect(mb).toBeLessThanOrEqual(64);
      // fill the cache with distinct top-100 answers (~0.6 MB each), then send large batches
      const words = ['ka', 'lo', 'mi', 'ren', 'tas', 'vo', 'qui', 'bel', 'dor', 'fen', 'gra', 'hu'];
      for (let i = 0; i < 300; i++) {
        const q = `${words[i % 12]}${words[(i >> 2) % 12]} ${words[(i * 7) % 12]}${words[(i * 5) % 12]} ${i}`;
        const r = await postJson(`${s.url}/retrieve`, { queries: [q], topk: 100 });
        expect(r.status).toBe(200);
      }
      for (let b = 0; b < 20; b++) {
        const queries = Array.from({ length: 16 }, (_, i) => `${words[(b + i) % 12]}${words[i % 12]} batch ${b} ${i}`);
        const r = await postJson(`${s.url}/retrieve`, { queries, topk: 100 });
        expect(r.status).toBe(200);
      }
      expect(s.child.exitCode, s.stderr()).toBeNull();
    } finally {
      await s.stop();
    }
  }, 240_000);

  it('refuses a --cache-mb the heap cannot hold, naming both numbers', async () => {
    const r = await runBinAsync(BIN.server, ['--corpus', 'c', '--index-dir', indexDir, '--cache-mb', '256'], {
      NODE_OPTIONS: '--max-old-space-size=192',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /--cache-mb 256 cannot fit: this process's heap limit is \d+ MiB, and the cache may take at most half of it/,
    );
  });
});

describe('the address a server says it listens on', () => {
  it('brackets an IPv6 address (before: http://:::PORT)', async () => {
    const s = await startHttpServer(['--corpus', 'c', '--index-dir', indexDir, '--host', '::1']);
    try {
      expect(s.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
      expect((await fetch(`${s.url}/health`)).status).toBe(200);
    } finally {
      await s.stop();
    }
  });
});

import type { AddressInfo } from 'node:net';
import { RetrieverSlot } from '../../src/server/mcp/retriever-slot.js';
import { TEST_ANN } from '../helpers/ann.js';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDensePhase } from '../../src/build/dense-phase.js';
import { openDenseArm } from '../../src/index/dense/dense-arm.js';
import { openCorpus, type OpenCorpus } from '../../src/search/open-corpus.js';
import { Retriever } from '../../src/search/retriever.js';
import type { QueryEncoder } from '../../src/core/contracts.js';
import { AnswerBudget } from '../../src/server/admission.js';
import { createHttpApp } from '../../src/server/transports/http/http-app.js';
import { createServerMetrics } from '../../src/server/server-metrics.js';
import { silentLogger } from '../../src/util/log.js';
import { build, writeJsonl } from '../helpers/build.js';
import { openTinyEncoder } from '../helpers/encoder.js';
import { postJson } from '../helpers/http-server.js';
import { HAS_SHARED, makeTempDir } from '../helpers/paths.js';

const tmp = makeTempDir();
let corpus: OpenCorpus;
let url: string;
let close: () => Promise<void>;
let closeMcp: () => Promise<void> = async () => {};
let release: () => void = () => {};
let slot: RetrieverSlot;
const metrics = createServerMetrics();

/** Our QueryEncoder interface, stuck until the test releases it. */
const stuck: QueryEncoder = {
  id: 'stuck',
  dim: 32,
  embedQueries: (texts) =>
    new Promise((resolve) => {
      const prev = release;
      release = () => {
        prev();
        resolve(texts.map(() => new Float32Array(32).fill(1 / Math.sqrt(32))));
      };
    }),
};

beforeAll(async () => {
  if (!HAS_SHARED) return;
  const enc = await openTinyEncoder();
  const input = writeJsonl(
    tmp.dir,
    'c.jsonl',
    Array.from({ length: 30 }, (_, i) => ({ id: `d${i}`, contents: `"T${i}"\nriver ${i} bank` })),
  );
  const dense = createDensePhase({
    encoder: enc,
    source: { kind: 'local', path: '/x' },
    vectorsDtype: 'f32',
    ann: TEST_ANN,
    exactBelow: 1000,
    annThreads: 1,
  });
  await build({ name: 'c', input, format: 'wiki18', indexDir: join(tmp.dir, 'idx'), dense });
  await enc.close();
  corpus = openCorpus(join(tmp.dir, 'idx'), 'c', (dir, m, hint) =>
    openDenseArm(dir, m.dense!, hint, { mmap: true, rescoreFactor: 4 }),
  );
  const retriever = new Retriever([corpus], new Map([['c', stuck]]), {
    topK: 3,
    maxTopK: 100,
    maxQueryChars: 8192,
    candidates: 100,
    rrfK: 60,
    weights: { bm25: 1, dense: 1 },
  });
  const app = createHttpApp({
    http: {
      allowedOrigins: [],
      corsOrigins: [],
      maxBodyBytes: 1 << 20,
      allowedHosts: ['127.0.0.1'],
      connections: { maxConnections: 4096, headersTimeoutMs: 10_000 },
    },
    admission: { maxInFlight: 3, deadlineMs: 300 },
    answers: new AnswerBudget(64 * 2 ** 20),
    mcp: { stateless: false, sessionTtlMs: 60_000, maxSessions: 100 },
    maxBatchQueries: 256,
    metrics,
    log: silentLogger,
    slot: (slot = new RetrieverSlot(retriever.opts, ['c'])),
  });
  app.attach(retriever);
  closeMcp = async () => app.mcp()?.closeAll();
  const server = app.server;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = async () => {
    release();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
});
afterAll(async () => {
  await close?.();
  corpus?.close();
  tmp.cleanup();
});

describe.skipIf(!HAS_SHARED)('faults while serving (stuck encoder, overload, disconnects)', () => {
  it('a stuck encoder costs a request its deadline (504), not the server', async () => {
    const t0 = performance.now();
    const r = await postJson(`${url}/retrieve`, { queries: ['river'], mode: 'hybrid' });
    expect(r.status).toBe(504);
    expect((r.json as unknown as { error: { code: string } }).error.code).toBe('DEADLINE');
    expect(performance.now() - t0).toBeLessThan(2000);
    const ok = await postJson(`${url}/retrieve`, { queries: ['river'], mode: 'bm25' });
    expect(ok.status).toBe(200);
    release();
  });

  it('answers 503 with Retry-After at once when the in-flight limit is reached', async () => {
    const slow = [1, 2, 3].map((i) => postJson(`${url}/retrieve`, { queries: [`busy ${i}`], mode: 'dense' }));
    await new Promise((r) => setTimeout(r, 50));
    const t0 = performance.now();
    const r = await postJson(`${url}/retrieve`, { queries: ['one more'], mode: 'bm25' });
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('1');
    expect(performance.now() - t0).toBeLessThan(200);
    release();
    await Promise.all(slow);
    expect(metrics.rejected.get({ route: '/retrieve' })).toBeGreaterThanOrEqual(1);
    expect((await postJson(`${url}/retrieve`, { queries: ['after'], mode: 'bm25' })).status).toBe(200);
  });

  it('survives clients that disconnect mid-request', async () => {
    for (let i = 0; i < 5; i++) {
      const ctrl = new AbortController();
      const p = fetch(`${url}/retrieve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ queries: [`gone ${i}`], mode: 'dense' }),
        signal: ctrl.signal,
      })
        .then((r) => r.status)
        .catch((e: Error) => e.name);
      await new Promise((r) => setTimeout(r, 20));
      ctrl.abort();
      // aborted while stuck, or refused at once once the gone requests fill the in-flight slots
      expect(['AbortError', 503]).toContain(await p);
    }
    release();
    await new Promise((r) => setTimeout(r, 350)); // their deadlines pass
    expect((await postJson(`${url}/retrieve`, { queries: ['still here'], mode: 'bm25' })).status).toBe(200);
  });

  // last: it closes the MCP layer
  it('stateless MCP calls in flight when MCP closes get an error answer, later ones 503 at once', async () => {
    const accept = { accept: 'application/json, text/event-stream' };
    const call = (query: string) =>
      postJson(
        `${url}/mcp`,
        {
          jsonrpc: '2.0',
          id: 5,
          method: 'tools/call',
          params: { name: 'search', arguments: { query, mode: 'dense' } },
        },
        accept,
      );
    const pending = call('waiting on the encoder');
    await new Promise((r) => setTimeout(r, 50));
    await closeMcp();
    const r = await pending;
    expect(r.status).toBe(200);
    expect((r.json as unknown as { id: number; error: { message: string } }).id).toBe(5);
    expect((r.json as unknown as { error: { message: string } }).error.message).toMatch(/shutting down/);
    const t0 = performance.now();
    const late = await call('after close');
    expect(late.status).toBe(503);
    expect(late.headers.get('retry-after')).toBe('1');
    expect(performance.now() - t0).toBeLessThan(1000);
    release();
  });

  // last: it takes the corpus away from every later request
  it('stops answering searches, and says why, when the index is found damaged while serving', async () => {
    expect((await fetch(`${url}/ready`)).status).toBe(200);
    slot.withdraw(new Error('c/chunks.sqlite does not match its checksum in manifest.json (64 MiB block 2)'));
    const r = await postJson(`${url}/retrieve`, { queries: ['river'], mode: 'bm25' });
    expect(r.status).toBe(503);
    expect(r.json).toMatchObject({
      error: {
        code: 'NOT_READY',
        message: expect.stringMatching(/^not serving: corpus c failed: c\/chunks\.sqlite does not match its checksum/),
      },
    });
    expect((await fetch(`${url}/ready`)).status).toBe(503);
    expect((await fetch(`${url}/health`)).status).toBe(200);
  });
});

import { closeSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INDEX_FILES } from '../../src/index/layout.js';
import { copyIndex, writeJsonl } from '../helpers/build.js';
import { tinyBuildArgs } from '../helpers/encoder.js';
import { postJson, startHttpServer, type RunningServer } from '../helpers/http-server.js';
import { runBin } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir } from '../helpers/paths.js';
import { rawDatabase } from '../../src/store/sqlite.js';

// Reliability III, items 1, 15 and 21: files damaged where a sampled or size-only check cannot see,
// before or while a server uses them. Every case ends in an error for the request (or a refusal to
// start naming the file), never in a dead process.
const tmp = makeTempDir();
const good = join(tmp.dir, 'good');
let n = 0;

beforeAll(() => {
  if (!HAS_SHARED) return;
  const input = writeJsonl(
    tmp.dir,
    'c.jsonl',
    Array.from({ length: 3000 }, (_, i) => ({
      id: String(i),
      contents: `"T${i}"\nsome text number ${i} word${i % 97}`,
    })),
  );
  // --exact-below 0 forces an HNSW graph file
  const r = runBin(BIN.build, [...tinyBuildArgs('c', input, good), '--exact-below', '0']);
  expect(r.status, r.stderr).toBe(0);
}, 180_000);
afterAll(tmp.cleanup);

function copy(): { indexDir: string; dir: string } {
  return copyIndex(good, 'c', join(tmp.dir, `bad${n++}`));
}

/** Overwrites `length` bytes at `at` with pseudo-random garbage; the file keeps its size. */
function garbage(path: string, at: number, length: number): void {
  const b = Buffer.alloc(length);
  let x = 0x9e3779b9;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, b, 0, length, at);
  } finally {
    closeSync(fd);
  }
}

/** Points the BM25 term "text" (in every chunk) past the end of bm25.postings; no file changes size. */
function breakTermOffset(dir: string): void {
  const end = statSync(join(dir, INDEX_FILES.postings)).size;
  const db = rawDatabase(join(dir, INDEX_FILES.store));
  const r = db.prepare('UPDATE bm25_terms SET offset = ? WHERE term = ?').run(end + 4096, 'text');
  db.close();
  expect(r.changes).toBe(1);
}

async function retrieve(s: RunningServer, query: string, mode: string) {
  return postJson(`${s.url}/retrieve`, { queries: [query], topk: 3, mode });
}

async function expectAlive(s: RunningServer): Promise<void> {
  expect((await fetch(`${s.url}/health`)).status).toBe(200);
  const ok = await retrieve(s, 'number', 'dense');
  expect(ok.status, ok.text).toBe(200);
  expect(s.child.exitCode).toBeNull();
}

describe.skipIf(!HAS_SHARED)('a damaged index fails the request, never the process', () => {
  it('a hybrid query whose BM25 arm fails while the encoder works answers 500 and keeps serving', async () => {
    const { indexDir, dir } = copy();
    breakTermOffset(dir);
    const s = await startHttpServer(['--corpus', 'c', '--index-dir', indexDir, '--verify', 'sizes']);
    try {
      const bm25 = await retrieve(s, 'text', 'bm25');
      expect(bm25.status, bm25.text).toBe(500);
      expect(bm25.text).toMatch(/INDEX_CORRUPT/);
      for (let i = 0; i < 5; i++) {
        const hybrid = await retrieve(s, `text ${i}`, 'hybrid');
        expect(hybrid.status, hybrid.text).toBe(500);
        expect(hybrid.text).toMatch(/bm25\.postings/);
      }
      // a batch where one query's BM25 fails while the others' are scored
      const batch = await postJson(`${s.url}/retrieve`, { queries: ['number 1', 'text', 'word3'], mode: 'hybrid' });
      expect(batch.status).toBe(500);
      await expectAlive(s);
    } finally {
      await s.stop();
    }
  });

  it('garbage in the middle of the HNSW graph under --verify sizes: refused at start with the file named', () => {
    const { indexDir, dir } = copy();
    const graph = join(dir, INDEX_FILES.ann);
    const size = statSync(graph).size;
    // the links and levels sit behind the quantised vectors: damage the graph's second half
    garbage(graph, Math.floor(size / 2), Math.floor(size / 4));
    const r = runBin(BIN.server, ['--corpus', 'c', '--index-dir', indexDir, '--verify', 'sizes']);
    expect(r.signal).toBeNull();
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/dense\.usearch.*damaged.*rebuild it with/);
  });

  it('a graph whose levels are damaged is refused the same way', () => {
    const { indexDir, dir } = copy();
    const graph = join(dir, INDEX_FILES.ann);
    const b = Buffer.alloc(8);
    const fd = openSync(graph, 'r');
    // rows × bytes per row of the quantised vectors, then the 64-byte head and 40-byte header: the levels
    readSync(fd, b, 0, 8, 0);
    closeSync(fd);
    const levelsAt = 8 + b.readUInt32LE(0) * b.readUInt32LE(4) + 64 + 40;
    garbage(graph, levelsAt + 100, 64);
    const r = runBin(BIN.server, ['--corpus', 'c', '--index-dir', indexDir, '--verify', 'sizes']);
    expect(r.signal).toBeNull();
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/dense\.usearch/);
  });

  it('the chunk store damaged while served: searches answer 500, the server stays up', async () => {
    const { indexDir, dir } = copy();
    const s = await startHttpServer(['--corpus', 'c', '--index-dir', indexDir, '--cache-size', '0']);
    try {
      expect((await retrieve(s, 'number 7', 'hybrid')).status).toBe(200);
      const store = join(dir, INDEX_FILES.store);
      // the chunk rows fill the store's middle pages; its header and schema stay readable
      garbage(store, 8192, statSync(store).size - 3 * 8192);
      let failed = 0;
      for (let i = 0; i < 10; i++) {
        const r = await retrieve(s, `number ${i * 301} word${i}`, 'hybrid');
        expect([200, 500]).toContain(r.status);
        if (r.status === 500) failed++;
      }
      expect(failed).toBeGreaterThan(0);
      expect((await fetch(`${s.url}/health`)).status).toBe(200);
      expect(s.child.exitCode).toBeNull();
    } finally {
      await s.stop();
    }
  });
});

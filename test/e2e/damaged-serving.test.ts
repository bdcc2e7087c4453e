import { closeSync, openSync, readSync, statSync, writeFileSync, writeSync } from 'node:fs';
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

describe.skipIf(!HAS_SHARED)('a damaged index fails the request, never the process', () => {
  it('a hybrid query whose BM25 arm fails while the encoder works answers 500, then /ready turns 503', async () => {
    const { indexDir, dir } = copy();
    breakTermOffset(dir);
    const s = await startHttpServer(['--corpus', 'c', '--index-dir', indexDir, '--verify', 'sizes']);
    try {
      expect((await fetch(`${s.url}/ready`)).status).toBe(200);
      const hybrid = await retrieve(s, 'text 1', 'hybrid');
      expect(hybrid.status, hybrid.text).toBe(500);
      expect(hybrid.text).toMatch(/INDEX_CORRUPT/);
      expect(hybrid.text).toMatch(/bm25\.postings/);
      await expectWithdrawn(s, /bm25\.postings/);
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

  it('the chunk store damaged while served: the file and the fix named, /ready turns 503 (issue 47, item 10)', async () => {
    const { indexDir, dir } = copy();
    const s = await startHttpServer(['--corpus', 'c', '--index-dir', indexDir, '--cache-size', '0']);
    try {
      expect((await retrieve(s, 'number 7', 'hybrid')).status).toBe(200);
      const store = join(dir, INDEX_FILES.store);
      // the chunk rows fill the store's middle pages; its header and schema stay readable
      garbage(store, 8192, statSync(store).size - 3 * 8192);
      let failure: Awaited<ReturnType<typeof retrieve>> | undefined;
      for (let i = 0; i < 10 && !failure; i++) {
        const r = await retrieve(s, `number ${i * 301} word${i}`, 'hybrid');
        expect([200, 500]).toContain(r.status);
        if (r.status === 500) failure = r;
      }
      expect(failure?.text).toMatch(/INDEX_CORRUPT/);
      expect(failure?.text).toMatch(/chunks\.sqlite is damaged .*rebuild it with `retriever-mcp build/);
      await expectWithdrawn(s, /chunks\.sqlite/);
    } finally {
      await s.stop();
    }
  });

  it.each([
    [
      'a store whose header is garbage, under --verify sizes',
      (d: string) => garbage(join(d, INDEX_FILES.store), 0, 100),
      /chunks\.sqlite is damaged \(SQLite: file is not a database\): rebuild it with/,
    ],
    [
      'a journal left beside the store, under --verify auto',
      (d: string) => writeFileSync(join(d, `${INDEX_FILES.store}-journal`), 'garbage'),
      /chunks\.sqlite has a chunks\.sqlite-journal .* remove the stray file .* or rebuild it with/,
    ],
    [
      "a graph file whose vectors' header is flipped, under --verify sizes",
      (d: string) => garbage(join(d, INDEX_FILES.ann), 0, 8),
      /dense\.usearch.*damaged.*rebuild it with/,
    ],
  ])('at rest, %s: refused at start naming the file and the fix (issue 47, item 10)', (_label, damage, message) => {
    const { indexDir, dir } = copy();
    damage(dir);
    const verify = /--verify auto/.test(_label) ? 'auto' : 'sizes';
    const r = runBin(BIN.server, ['--corpus', 'c', '--index-dir', indexDir, '--verify', verify]);
    expect(r.signal).toBeNull();
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(message);
  });
});

/** After a request found a file damaged: /ready 503, searches 503 naming the file, the process alive. */
async function expectWithdrawn(s: RunningServer, file: RegExp): Promise<void> {
  expect((await fetch(`${s.url}/ready`)).status).toBe(503);
  const later = await retrieve(s, 'number', 'dense');
  expect(later.status, later.text).toBe(503);
  expect(later.text).toMatch(file);
  expect((await fetch(`${s.url}/health`)).status).toBe(200);
  expect(s.child.exitCode).toBeNull();
}

import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INDEX_FILES } from '../../src/index/layout.js';
import { copyIndex, writeJsonl } from '../helpers/build.js';
import { runBin } from '../helpers/mcp.js';
import { tinyBuildArgs } from '../helpers/encoder.js';
import { BIN, HAS_SHARED, makeTempDir } from '../helpers/paths.js';

const tmp = makeTempDir();
const good = join(tmp.dir, 'good');
let n = 0;

beforeAll(() => {
  if (!HAS_SHARED) return;
  const input = writeJsonl(
    tmp.dir,
    'c.jsonl',
    Array.from({ length: 300 }, (_, i) => ({ id: String(i), contents: `"T${i}"\nsome text number ${i}` })),
  );
  // --exact-below 0 forces an HNSW file, so every index file kind exists
  const r = runBin(BIN.build, [...tinyBuildArgs('c', input, good), '--exact-below', '0']);
  expect(r.status, r.stderr).toBe(0);
});
afterAll(tmp.cleanup);

/** A copy of the good index to damage; returns its index dir and corpus dir. */
function copy(): { indexDir: string; dir: string } {
  return copyIndex(good, 'c', join(tmp.dir, `bad${n++}`));
}

/** The server over stdio with stdin closed; a start-up that hangs (a FIFO read) is killed after 30 s. */
function serve(indexDir: string) {
  const r = spawnSync(process.execPath, [BIN.server, '--corpus', 'c', '--index-dir', indexDir], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Puts `make(path)` in place of index file `name`. */
function replace(dir: string, name: string, make: (path: string) => void): void {
  const path = join(dir, name);
  rmSync(path);
  make(path);
}

function flip(path: string, at: number): void {
  const b = readFileSync(path);
  b[at] = (b[at] as number) ^ 0x40;
  writeFileSync(path, b);
}

function editManifest(
  dir: string,
  edit: (
    m: Record<string, unknown> & { corpus: Record<string, unknown>; dense: { encoder: Record<string, unknown> } },
  ) => void,
): void {
  const p = join(dir, INDEX_FILES.manifest);
  const m = JSON.parse(readFileSync(p, 'utf8'));
  edit(m);
  writeFileSync(p, JSON.stringify(m));
}

const CASES: Array<[string, (dir: string) => void, RegExp]> = [
  [
    'truncated SQLite file',
    (d) => truncateSync(join(d, INDEX_FILES.store), 4096),
    /chunks\.sqlite is 4096 bytes but the manifest says/,
  ],
  [
    'bit flip inside SQLite',
    (d) => flip(join(d, INDEX_FILES.store), 6000),
    /chunks\.sqlite does not match its checksum/,
  ],
  ['truncated ANN file', (d) => truncateSync(join(d, INDEX_FILES.ann), 100), /dense\.usearch is 100 bytes/],
  ['bit-flipped ANN file', (d) => flip(join(d, INDEX_FILES.ann), 2000), /dense\.usearch does not match its checksum/],
  ['bit-flipped vectors', (d) => flip(join(d, INDEX_FILES.vectors), 333), /vectors\.bin does not match its checksum/],
  [
    'bit-flipped postings',
    (d) => flip(join(d, INDEX_FILES.postings), 10),
    /bm25\.postings does not match its checksum/,
  ],
  [
    'manifest from another format version',
    (d) => editManifest(d, (m) => (m['format_version'] = 99)),
    /index format 99 .* this server reads formats 1, 2, 3 \(it builds 2, 3 with an IVF index\)/,
  ],
  [
    'manifest that is not JSON',
    (d) => writeFileSync(join(d, INDEX_FILES.manifest), '{oops'),
    /manifest\.json is not valid JSON/,
  ],
  [
    'another dimension',
    (d) => editManifest(d, (m) => (m.dense.encoder['dim'] = 768)),
    /vectors\.bin is \d+ bytes, expected 300 × 3072/,
  ],
  [
    'another model',
    (d) => editManifest(d, (m) => (m.dense.encoder['model_sha256'] = 'f'.repeat(64))),
    /index c was built with .* model file sha256/,
  ],
  [
    'a chunk count that does not match',
    (d) => editManifest(d, (m) => (m.corpus['chunks'] = 299)),
    /holds 300 chunks but the manifest says 299/,
  ],
  ['a missing file', (d) => truncateSync(join(d, INDEX_FILES.norms), 0), /bm25\.norms is 0 bytes/],
  // every file an index names is opened as a regular file inside the index directory (issue 47, item 8)
  [
    'manifest a symlink to /dev/zero (read to 16.8 GB, then std::bad_alloc)',
    (d) => replace(d, INDEX_FILES.manifest, (p) => symlinkSync('/dev/zero', p)),
    /manifest\.json resolves to \/dev\/zero, outside .*|manifest\.json is a character device, not a regular file/,
  ],
  [
    'manifest a FIFO (start-up hung forever)',
    (d) => replace(d, INDEX_FILES.manifest, (p) => execFileSync('mkfifo', [p])),
    /manifest\.json is a FIFO \(named pipe\), not a regular file/,
  ],
  [
    'a 20 MB manifest (read whole)',
    (d) =>
      writeFileSync(
        join(d, INDEX_FILES.manifest),
        `${readFileSync(join(d, INDEX_FILES.manifest), 'utf8')}${' '.repeat(20 * 2 ** 20)}`,
      ),
    /manifest\.json is \d+ bytes, more than such a file can be \(16777216\)/,
  ],
  [
    'a manifest naming a file out of the directory',
    (d) =>
      editManifest(d, (m) => {
        (m['files'] as Record<string, unknown>)['../../../etc/passwd'] = { bytes: 1, sha256: '0'.repeat(64) };
      }),
    /lists a file "\.\.\/\.\.\/\.\.\/etc\/passwd", which is none of an index's own/,
  ],
  [
    'an index file a symlink out of the directory',
    (d) =>
      replace(d, INDEX_FILES.norms, (p) => {
        const outside = join(tmp.dir, `norms-elsewhere-${n}`);
        copyFileSync(join(good, 'c', INDEX_FILES.norms), outside);
        symlinkSync(outside, p);
      }),
    /bm25\.norms resolves to .*norms-elsewhere-\d+, outside .* \(listed in the manifest\)/,
  ],
];

describe.skipIf(!HAS_SHARED)('startup refuses damaged or mismatched indexes', () => {
  it('serves the undamaged index', () => {
    const { indexDir } = copy();
    // answers one request then exits when stdin closes
    expect(serve(indexDir).status).toBe(0);
  });

  it.each(CASES)('%s: one line naming the file and the fix, exit 1', (_label, damage, message) => {
    const { indexDir, dir } = copy();
    damage(dir);
    const r = serve(indexDir);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('retriever-mcp: error'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
    expect(lines[0]).toMatch(/retriever-mcp build|rebuild/);
  });
});

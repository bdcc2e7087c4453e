/**
 * The bench's PyPI fetcher against a local index of our own: a resumed
 * download after a dropped connection, a pinned-hash mismatch, an index that
 * cannot be reached, and a wheel member checked against its RECORD.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchWheel, Wheel, type PinnedWheel } from '../../../scripts/models/pypi.js';
import { makeTempDir } from '../../helpers/paths.js';

const tmp = makeTempDir();

/** A stored (uncompressed) zip of `files`, with a wheel RECORD; `corrupt` gets a wrong hash there. */
function makeWheel(files: Record<string, Buffer>, corrupt?: string): Buffer {
  const record = Object.entries(files)
    .map(
      ([n, d]) =>
        `${n},sha256=${createHash('sha256')
          .update(corrupt === n ? 'x' : d)
          .digest('base64url')},${d.length}`,
    )
    .join('\n');
  const all = { ...files, 'demo-1.0.dist-info/RECORD': Buffer.from(`${record}\n`) };
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, data] of Object.entries(all)) {
    const n = Buffer.from(name);
    const h = Buffer.alloc(30);
    h.writeUInt32LE(0x04034b50, 0);
    h.writeUInt16LE(20, 4);
    h.writeUInt32LE(crc32(data), 14);
    h.writeUInt32LE(data.length, 18);
    h.writeUInt32LE(data.length, 22);
    h.writeUInt16LE(n.length, 26);
    locals.push(h, n, data);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 6);
    c.writeUInt32LE(crc32(data), 16);
    c.writeUInt32LE(data.length, 20);
    c.writeUInt32LE(data.length, 24);
    c.writeUInt16LE(n.length, 28);
    c.writeUInt32LE(offset, 42);
    centrals.push(c, n);
    offset += 30 + n.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(all).length, 8);
  end.writeUInt16LE(Object.keys(all).length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

const payload = Buffer.alloc(300_000, 7);
const wheel = makeWheel({ 'demo/model.onnx': payload, 'demo/config.json': Buffer.from('{"a":1}') }, 'demo/config.json');
const sha = createHash('sha256').update(wheel).digest('hex');
const pinned: PinnedWheel = { project: 'demo', filename: 'demo-1.0-py3-none-any.whl', sha256: sha };

let server: Server;
let index = '';
let dropFirst = true;
const ranges: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/simple/demo/') {
      res.setHeader('content-type', 'application/vnd.pypi.simple.v1+json');
      res.end(
        JSON.stringify({
          files: [{ filename: pinned.filename, url: '../../files/demo.whl', hashes: { sha256: sha } }],
        }),
      );
      return;
    }
    if (req.url === '/files/demo.whl') {
      const range = req.headers.range;
      ranges.push(range ?? 'none');
      const from = range ? Number(/bytes=(\d+)-/.exec(range)?.[1]) : 0;
      res.writeHead(range ? 206 : 200, { 'content-length': String(wheel.length - from) });
      if (dropFirst) {
        // a third of the file, then the connection drops
        dropFirst = false;
        res.write(wheel.subarray(from, from + 100_000), () => res.destroy());
        return;
      }
      res.end(wheel.subarray(from));
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  index = `http://127.0.0.1:${(server.address() as AddressInfo).port}/simple`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  tmp.cleanup();
});

describe('fetching pinned wheels from a PyPI index', () => {
  it('resumes a dropped download with a Range request and checks the pinned sha256', async () => {
    const cacheDir = join(tmp.dir, 'cache');
    const path = await fetchWheel(pinned, { index, cacheDir });
    expect(readFileSync(path).equals(wheel)).toBe(true);
    expect(ranges[0]).toBe('none');
    expect(Number(/^bytes=(\d+)-$/.exec(ranges[1] ?? '')?.[1])).toBeGreaterThan(0);
    // a cached, whole wheel is not fetched again
    const before = ranges.length;
    await fetchWheel(pinned, { index, cacheDir });
    expect(ranges.length).toBe(before);
  });

  it('refuses a wheel whose hash is not the pinned one, before downloading', async () => {
    const other = { ...pinned, sha256: '0'.repeat(64) };
    await expect(fetchWheel(other, { index, cacheDir: join(tmp.dir, 'c2') })).rejects.toThrow(
      /states sha256 .* but 0+ is pinned/,
    );
  });

  it('fails with a message naming the index when it cannot be reached', async () => {
    await expect(
      fetchWheel(pinned, { index: 'http://127.0.0.1:9/simple', cacheDir: join(tmp.dir, 'c3'), timeoutMs: 2000 }),
    ).rejects.toThrow(/cannot reach the PyPI index http:\/\/127\.0\.0\.1:9\/simple\/demo\/.*RETRIEVER_MCP_PYPI_INDEX/);
  });

  it("reads a member and checks it against the wheel's RECORD", () => {
    const path = join(tmp.dir, 'w.whl');
    writeFileSync(path, wheel);
    const w = new Wheel(path);
    expect(w.file('demo/model.onnx').equals(payload)).toBe(true);
    expect(() => w.file('demo/config.json')).toThrow(/does not match its RECORD hash/);
    expect(() => w.file('demo/missing')).toThrow(/has no demo\/missing/);
  });
});

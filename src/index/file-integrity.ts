import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { RetrieverError } from '../errors.js';
import { builtFileUrl } from '../util/built-file.js';
import { forEachFdChunk, forEachFileChunk, forEachFileChunkYielding } from '../util/hash-file.js';
import type { FileRecord } from './manifest.js';

/**
 * File checksums for index manifests: a whole-file sha256 plus a short hash
 * per 64 MiB block, so a large index can be spot-checked quickly at startup
 * (first, last and random blocks) and verified fully in the background.
 */
export const BLOCK_BYTES = 64 * 2 ** 20;

export function fingerprintFile(path: string): FileRecord {
  const whole = createHash('sha256');
  const blocks = new BlockHasher();
  forEachFileChunk(path, (chunk) => {
    whole.update(chunk);
    blocks.update(chunk);
  });
  return { bytes: blocks.bytes, sha256: whole.digest('hex'), blocks: blocks.finish() };
}

/** A whole file's size and sha256. */
export interface WholeFileHash {
  bytes: number;
  sha256: string;
}

export function wholeFileHash(path: string): WholeFileHash {
  const fd = openSync(path, 'r');
  try {
    return wholeFdHash(fd);
  } finally {
    closeSync(fd);
  }
}

/** `wholeFileHash` of a descriptor already open (positioned reads). */
function wholeFdHash(fd: number): WholeFileHash {
  const whole = createHash('sha256');
  let bytes = 0;
  forEachFdChunk(fd, (chunk) => {
    whole.update(chunk);
    bytes += chunk.length;
  });
  return { bytes, sha256: whole.digest('hex') };
}

/** The total size of `paths`. */
export function filesBytes(paths: readonly string[]): number {
  return paths.reduce((sum, path) => sum + statSync(path).size, 0);
}

/** Below this many bytes in all, fingerprintFiles hashes on the calling thread alone (a worker takes tens of ms to start). */
const PARALLEL_FROM_BYTES = 64 * 2 ** 20;

/**
 * `fingerprintFile` of each file, on two threads: a worker computes the
 * whole-file hashes while this thread computes the block hashes, each a
 * sha256 pass of its own over every byte. An index after a 1M-passage build
 * (860 MiB) took 1.1 s on one thread.
 */
export async function fingerprintFiles(
  paths: readonly string[],
  signal?: AbortSignal,
  onBytes?: (bytes: number) => void,
): Promise<FileRecord[]> {
  if (filesBytes(paths) < PARALLEL_FROM_BYTES) return paths.map((path) => fingerprintFile(path));
  const worker = new Worker(builtFileUrl('./hash-worker.js', import.meta.url), { workerData: { paths } });
  const wholes = new Promise<WholeFileHash[]>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the hashing thread exited (code ${code}) without an answer`)));
  });
  // if this thread's pass fails first, the worker's outcome is never awaited
  wholes.catch(() => undefined);
  const blocks: Array<{ bytes: number; blocks: string[] }> = [];
  try {
    // this thread yields as it goes, so a stop signal is handled within a fraction of a second
    let hashed = 0;
    for (const path of paths) {
      const hasher = new BlockHasher();
      await forEachFileChunkYielding(
        path,
        (chunk) => {
          hasher.update(chunk);
          onBytes?.((hashed += chunk.length));
        },
        signal,
      );
      blocks.push({ bytes: hasher.bytes, blocks: hasher.finish() });
    }
  } catch (err) {
    await worker.terminate();
    throw err;
  }
  let whole: WholeFileHash[];
  try {
    whole = await wholes;
  } catch (err) {
    throw new RetrieverError('IO', `cannot hash the index files: ${(err as Error).message}`, { cause: err });
  }
  return paths.map((path, i) => {
    const w = whole[i] as WholeFileHash;
    const b = blocks[i] as { bytes: number; blocks: string[] };
    if (w.bytes !== b.bytes) {
      throw new RetrieverError('IO', `${path} changed while it was hashed (${w.bytes} and ${b.bytes} bytes read)`);
    }
    return { bytes: w.bytes, sha256: w.sha256, blocks: b.blocks };
  });
}

/** The hash of each BLOCK_BYTES block of a stream of chunks (16 hex digits of its sha256). */
class BlockHasher {
  bytes = 0;
  private readonly blocks: string[] = [];
  private block = createHash('sha256');
  private inBlock = 0;

  /** `chunk` must not cross a block boundary: forEachFileChunk's 4 MiB reads divide 64 MiB blocks evenly. */
  update(chunk: Buffer): void {
    this.block.update(chunk);
    this.inBlock += chunk.length;
    this.bytes += chunk.length;
    if (this.inBlock === BLOCK_BYTES) {
      this.blocks.push(this.block.digest('hex').slice(0, 16));
      this.block = createHash('sha256');
      this.inBlock = 0;
    }
  }

  finish(): string[] {
    if (this.inBlock > 0 || this.blocks.length === 0) this.blocks.push(this.block.digest('hex').slice(0, 16));
    return this.blocks;
  }
}

export type VerifyMode = 'full' | 'sample' | 'sizes';

/**
 * Recomputes block hashes and throws on the first mismatch: every block
 * ('full'), the first, last and `samples` random ones ('sample'), or every
 * block but the first and last ('inner': what a 'sample' with no random
 * blocks left unchecked). A file recorded without blocks is hashed whole by
 * 'full' and 'inner'.
 */
export function verifyFiles(
  dir: string,
  files: Record<string, FileRecord>,
  mode: VerifyMode | 'inner',
  fixHint: string,
  samples = 8,
  /** Descriptors to read instead of opening each file by name (the background pass, see below). */
  fds?: Readonly<Record<string, number>>,
): void {
  if (mode === 'sizes') return; // sizes were checked when the manifest was read
  for (const [name, rec] of Object.entries(files)) {
    const path = join(dir, name);
    const held = fds?.[name];
    const fd = held ?? openSync(path, 'r');
    try {
      if (!rec.blocks) {
        if (mode !== 'sample' && wholeFdHash(fd).sha256 !== rec.sha256) throw corrupt(path, fixHint);
        continue;
      }
      const n = rec.blocks.length;
      const which =
        mode === 'full'
          ? [...Array(n).keys()]
          : mode === 'inner'
            ? [...Array(Math.max(0, n - 2)).keys()].map((b) => b + 1)
            : pickBlocks(n, samples);
      for (const b of which) {
        if (blockHash(fd, b, rec.bytes) !== rec.blocks[b]) throw corrupt(path, fixHint, b);
      }
    } finally {
      if (held === undefined) closeSync(fd);
    }
  }
}

/** A check of every block running on a worker thread; `done` rejects with INDEX_CORRUPT (or IO) on the first mismatch. */
export interface BackgroundCheck {
  done: Promise<void>;
  /** Ends the check early (the corpus is closing); `done` then never settles. */
  stop(): Promise<void>;
}

/**
 * `verifyFiles(…, 'inner', …)` on a worker thread: the blocks a check of each
 * file's first and last block left, hashed while a server answers. No thread
 * starts when there are none (every file is one or two blocks). The worker
 * does not keep the process alive.
 */
export function verifyFilesInBackground(
  dir: string,
  files: Record<string, FileRecord>,
  fixHint: string,
): BackgroundCheck {
  if (Object.values(files).every((rec) => rec.blocks !== undefined && rec.blocks.length <= 2)) {
    return { done: Promise.resolve(), stop: async () => undefined };
  }
  // the files are opened now, beside the ones being served, and hashed through these descriptors:
  // a rebuild that swaps in a new build (and removes this one's directory) while the pass runs
  // never has its files judged by this build's manifest
  const fds: Record<string, number> = {};
  try {
    for (const name of Object.keys(files)) fds[name] = openSync(join(dir, name), 'r');
  } catch (err) {
    for (const fd of Object.values(fds)) closeSync(fd);
    throw new RetrieverError('IO', `cannot open the index files in ${dir}: ${(err as Error).message}`, { cause: err });
  }
  let open = true;
  const release = (): void => {
    if (!open) return; // once: a descriptor number closed twice may by then be another file's
    open = false;
    for (const fd of Object.values(fds)) closeSync(fd);
  };
  const worker = new Worker(builtFileUrl('./verify-worker.js', import.meta.url), {
    workerData: { dir, files, fixHint, fds },
  });
  worker.unref();
  let stopped = false;
  const checked = new Promise<void>((resolve, reject) => {
    worker.once('message', (m: { ok: true } | { ok: false; code: string; message: string }) => {
      if (m.ok) resolve();
      else reject(new RetrieverError(m.code === 'INDEX_CORRUPT' ? 'INDEX_CORRUPT' : 'IO', m.message));
    });
    worker.once('error', (err) =>
      reject(new RetrieverError('IO', `cannot check the index files in ${dir}: ${err.message}`, { cause: err })),
    );
    worker.once('exit', (code) => {
      if (!stopped) reject(new RetrieverError('IO', `the checksum thread for ${dir} exited (code ${code}) early`));
    });
  });
  // the descriptors close once the thread is done with them, however it ends
  const done = checked.finally(release);
  done.catch(() => undefined); // the caller's `done` handler reports a failure
  return {
    done,
    stop: async () => {
      stopped = true;
      await worker.terminate();
      release();
    },
  };
}

function pickBlocks(n: number, samples: number): number[] {
  const set = new Set([0, n - 1]);
  while (set.size < Math.min(n, samples + 2)) set.add(Math.floor(Math.random() * n));
  return [...set].sort((a, b) => a - b);
}

function blockHash(fd: number, block: number, size: number): string {
  const h = createHash('sha256');
  const buf = Buffer.allocUnsafe(1 << 22);
  const start = block * BLOCK_BYTES;
  const end = Math.min(size, start + BLOCK_BYTES);
  for (let pos = start; pos < end;) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, end - pos), pos);
    if (n === 0) break;
    h.update(buf.subarray(0, n));
    pos += n;
  }
  return h.digest('hex').slice(0, 16);
}

function corrupt(path: string, fixHint: string, block?: number): RetrieverError {
  const where = block === undefined ? '' : ` (64 MiB block ${block})`;
  return new RetrieverError(
    'INDEX_CORRUPT',
    `${path} does not match its checksum in manifest.json${where}: the file is damaged; ${fixHint}`,
  );
}

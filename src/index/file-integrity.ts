import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { RetrieverError } from '../errors.js';
import { forEachFileChunk } from '../util/hash-file.js';
import type { FileRecord } from './manifest.js';

/**
 * File checksums for index manifests: a whole-file sha256 plus a short hash
 * per 64 MiB block, so a large index can be spot-checked quickly at startup
 * (first, last and random blocks) and verified fully in the background.
 */
export const BLOCK_BYTES = 64 * 2 ** 20;

export function fingerprintFile(path: string): FileRecord {
  const whole = createHash('sha256');
  const blocks: string[] = [];
  let block = createHash('sha256');
  let inBlock = 0;
  let bytes = 0;
  forEachFileChunk(path, (chunk) => {
    whole.update(chunk);
    // 4 MiB reads divide 64 MiB blocks evenly
    block.update(chunk);
    inBlock += chunk.length;
    bytes += chunk.length;
    if (inBlock === BLOCK_BYTES) {
      blocks.push(block.digest('hex').slice(0, 16));
      block = createHash('sha256');
      inBlock = 0;
    }
  });
  if (inBlock > 0 || blocks.length === 0) blocks.push(block.digest('hex').slice(0, 16));
  return { bytes, sha256: whole.digest('hex'), blocks };
}

export type VerifyMode = 'full' | 'sample' | 'sizes';

/** Recomputes block hashes (all, or first/last/random ones) and throws on the first mismatch. */
export function verifyFiles(
  dir: string,
  files: Record<string, FileRecord>,
  mode: VerifyMode,
  fixHint: string,
  samples = 8,
): void {
  if (mode === 'sizes') return; // sizes were checked when the manifest was read
  for (const [name, rec] of Object.entries(files)) {
    const path = join(dir, name);
    if (!rec.blocks) {
      if (mode === 'full' && fingerprintFile(path).sha256 !== rec.sha256) throw corrupt(path, fixHint);
      continue;
    }
    const n = rec.blocks.length;
    const which = mode === 'full' ? [...Array(n).keys()] : pickBlocks(n, samples);
    const fd = openSync(path, 'r');
    try {
      for (const b of which) {
        if (blockHash(fd, b, rec.bytes) !== rec.blocks[b]) throw corrupt(path, fixHint, b);
      }
    } finally {
      closeSync(fd);
    }
  }
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

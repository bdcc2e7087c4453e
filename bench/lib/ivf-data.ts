import { closeSync, createWriteStream, existsSync, openSync, readSync, renameSync, writeSync } from 'node:fs';
import { once } from 'node:events';
import { prng } from './common.js';
import { npyHeader } from './vectors.js';

/**
 * A wiki-18-format corpus of `n` short passages (a title and 12 words drawn from a Zipf
 * vocabulary of 50,000 made-up words), written unless it exists: the text a dense-scale run
 * needs beside its vectors. At 21M it is 1.9 GB, where scaled real text is 14 GB and its store
 * 17 GB: the vectors (32 GB as f16) leave this disk no room for both. BM25 and the store at
 * wiki-18's real size are measured on real text by bm25-real.
 */
export async function ensureShortCorpus(path: string, n: number): Promise<void> {
  if (existsSync(path)) return;
  const rand = prng(31);
  const vocab = 50_000;
  // Zipf(1.1) by inverting its cumulative weights
  const cum = new Float64Array(vocab);
  let total = 0;
  for (let r = 0; r < vocab; r++) cum[r] = total += 1 / (r + 1) ** 1.1;
  const word = (): string => {
    const x = rand() * total;
    let lo = 0;
    let hi = vocab - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cum[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    return `w${lo.toString(36)}`;
  };
  const ws = createWriteStream(`${path}.tmp`);
  for (let i = 0; i < n; i++) {
    const words = Array.from({ length: 12 }, word).join(' ');
    if (!ws.write(`{"id":"${i}","contents":"\\"Doc ${i}\\"\\n${words}"}\n`)) await once(ws, 'drain');
    if (i % 1_000_000 === 0) process.stderr.write(`  ${path}: ${i}/${n}\n`);
  }
  ws.end();
  await once(ws, 'finish');
  renameSync(`${path}.tmp`, path);
}

/** The first `n` rows of a float16 .npy as a .npy of their own, unless it exists. */
export function ensureNpyPrefix(from: string, to: string, n: number, dim: number): void {
  if (existsSync(to)) return;
  const src = openSync(from, 'r');
  const dst = openSync(`${to}.tmp`, 'w');
  try {
    const head = Buffer.alloc(256);
    readSync(src, head, 0, 256, 0);
    const offset = 10 + head.readUInt16LE(8);
    writeSync(dst, npyHeader('<f2', n, dim));
    const buf = Buffer.alloc(64 * 2 ** 20);
    const bytes = n * dim * 2;
    for (let at = 0; at < bytes;) {
      const got = readSync(src, buf, 0, Math.min(buf.length, bytes - at), offset + at);
      if (got === 0) throw new Error(`${from} ended at ${at} of ${bytes} bytes`);
      let off = 0;
      while (off < got) off += writeSync(dst, buf, off, got - off);
      at += got;
    }
  } finally {
    closeSync(src);
    closeSync(dst);
  }
  renameSync(`${to}.tmp`, to);
}

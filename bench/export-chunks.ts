/**
 * Writes one of our built indexes' chunks as the corpus file the Python
 * peers' index builders read (FlashRAG, Search-R1: one `{"id", "contents"}`
 * object a line), in chunk-number order, so row i of their corpus is row i of
 * our `vectors.bin` and a peer built from our vectors searches the same ones.
 * `id` is our chunk id, so a peer's hits can be judged against our chunks.
 *
 *   node dist/bench/export-chunks.js --index-dir DIR --name NAME --out corpus.jsonl
 */
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { ChunkStore } from '../src/store/chunk-store.js';
import { arg } from './lib/common.js';

const indexDir = arg('index-dir');
const name = arg('name');
const out = arg('out');
if (!indexDir || !name || !out) {
  process.stderr.write('usage: export-chunks --index-dir DIR --name NAME --out corpus.jsonl\n');
  process.exit(2);
}
const store = new ChunkStore(join(indexDir, name, 'chunks.sqlite'));
const total = store.counts().chunks;
const ws = createWriteStream(out);
const STEP = 10_000;
for (let from = 0; from < total; from += STEP) {
  const to = Math.min(total, from + STEP);
  const lines = store.chunkRange(from, to).map((c) => `${JSON.stringify({ id: c.id, contents: c.contents })}\n`);
  if (!ws.write(lines.join(''))) await new Promise<void>((r) => ws.once('drain', () => r()));
}
await new Promise<void>((r) => ws.end(() => r()));
store.close();
process.stderr.write(`wrote ${total} chunks of ${name} to ${out}\n`);

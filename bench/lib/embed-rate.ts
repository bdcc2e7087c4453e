/**
 * Build throughput of the product's encoder, in a child process a benchmark
 * starts (so that bench/lib/ort-alias.ts can give it another ONNX Runtime):
 *
 *   node [--import dist/bench/lib/ort-alias.js] dist/bench/lib/embed-rate.js MODEL_DIR VARIANT THREADS TEXTS.jsonl
 *
 * Embeds the texts (one JSON string a line, prefixes included) at batch 32
 * after a warm-up, as a build does, and prints {"passages_per_s": …, "rss_mb": …}.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { openEncoder } from '../../src/encoder/load-encoder.js';
import { silentLogger } from '../../src/util/log.js';

const [dir, variant, threads, file] = process.argv.slice(2) as [string, string, string, string];
const texts = readFileSync(file, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as string);
const { encoder } = await openEncoder(
  {
    model: basename(dir),
    modelPath: dir,
    variant,
    revision: 'main',
    device: 'cpu',
    threads: Number(threads),
    batchSize: 32,
  },
  { endpoint: '', cacheDir: '', offline: true, log: silentLogger, progress: false },
);
try {
  await encoder.embedRaw(texts.slice(0, 32));
  const t0 = performance.now();
  await encoder.embedRaw(texts);
  const seconds = (performance.now() - t0) / 1000;
  process.stdout.write(`${JSON.stringify({ passages_per_s: texts.length / seconds })}\n`);
} finally {
  await encoder.close();
}

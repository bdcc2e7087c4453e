import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureGenCorpus, buildWiki18Index } from './child.js';
import { BENCH_DATA } from './common.js';
import { ensureVectors } from './vectors.js';

/**
 * The 100k-chunk hybrid index that the load, determinism, event-loop and
 * overhead benchmarks serve: generated wiki-18-style text with clustered
 * vectors imported for `model`'s dimension. Built on first use.
 */
export const LOAD_INDEX_DIR = join(BENCH_DATA, 'load-indexes');
export const BERT_BASE = join(BENCH_DATA, 'bert-base-random');

/** The passages and the vectors (for `model`'s dimension) that the index is built from. */
export function loadIndexInputs(model = BERT_BASE): { corpus: string; vectors: string; dim: number } {
  const dim = (JSON.parse(readFileSync(join(model, 'config.json'), 'utf8')) as { hidden_size: number }).hidden_size;
  return {
    corpus: join(BENCH_DATA, 'gen-100k.jsonl'),
    vectors: join(BENCH_DATA, `vec-clustered-100k-${dim}.fbin`),
    dim,
  };
}

export function ensureLoadIndex(name = 'load100k', model = BERT_BASE): void {
  if (existsSync(join(LOAD_INDEX_DIR, name, 'manifest.json'))) return;
  const { corpus, vectors, dim } = loadIndexInputs(model);
  ensureGenCorpus(100_000); // the corpus above: gen-100k.jsonl
  ensureVectors(vectors, 'clustered', 100_000, dim, 11, true);
  buildWiki18Index(name, corpus, LOAD_INDEX_DIR, ['--model-path', model, '--vectors', vectors, '--no-progress']);
}

/** Server arguments for that index with the result cache off, so every request does real work. */
export function loadServerArgs(name = 'load100k', model = BERT_BASE): string[] {
  return ['--corpus', name, '--index-dir', LOAD_INDEX_DIR, '--model-path', model, '--cache-size', '0'];
}

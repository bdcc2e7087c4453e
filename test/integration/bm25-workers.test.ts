import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Bm25Builder } from '../../src/index/bm25/bm25-builder.js';
import type { TermEntry } from '../../src/store/chunk-store.js';
import { createEnglishAnalyzer } from '../../src/text/analyzer.js';
import { makeTempDir } from '../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

const WORDS = ['river', 'bank', 'money', 'fish', 'boat', 'city', 'king', 'war', 'music', 'ocean', 'film', 'novel'];

/** Texts with common terms (in every batch, so the workers' lists interleave) and rare ones. */
function texts(n: number): string[] {
  let seed = 11;
  const rand = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  return Array.from({ length: n }, (_, i) => {
    const words = Array.from({ length: 12 }, () => WORDS[Math.floor(rand() * WORDS.length)] as string);
    if (i % 7 === 0) words.push(`rare${i % 97}`);
    if (i % 5000 === 1) words.push('once');
    if (i % 3 === 0) words.push(...Array.from({ length: 1 + (i % 4) }, () => 'fish')); // tf > 1
    return words.join(' ');
  });
}

async function buildWith(name: string, docs: string[], workers: number, maxPostingsInMemory: number) {
  const dir = join(tmp.dir, name);
  mkdirSync(dir, { recursive: true });
  const builder = new Bm25Builder(createEnglishAnalyzer(), { maxPostingsInMemory, tempDir: dir, workers });
  for (let i = 0; i < docs.length; i++) {
    const wait = builder.add(i, docs[i] as string);
    if (wait) await wait;
  }
  const terms: TermEntry[] = [];
  const stats = await builder.finish(join(dir, 'postings'), join(dir, 'norms'), (entries) => {
    for (const e of entries) terms.push(e);
  });
  return {
    stats,
    terms,
    postings: readFileSync(join(dir, 'postings')),
    norms: readFileSync(join(dir, 'norms')),
  };
}

describe('BM25 build on worker threads', () => {
  it('merges interleaved runs from two workers into the same bytes as one in-memory pass', async () => {
    // 12k chunks = 6 batches alternating between 2 workers; a 20k-posting
    // budget makes each worker spill many runs, so the merge sees several
    // runs per worker and lists that interleave batch by batch
    const docs = texts(12_000);
    const inline = await buildWith('inline', docs, 0, 10_000_000);
    const workers = await buildWith('workers', docs, 2, 20_000);
    expect(inline.stats.runs).toBe(0);
    expect(workers.stats.runs).toBeGreaterThan(4);
    expect(workers.norms.equals(inline.norms)).toBe(true);
    expect(workers.terms).toEqual(inline.terms);
    expect(workers.postings.equals(inline.postings)).toBe(true);
    expect(workers.stats.postings).toBe(inline.stats.postings);
    expect(workers.stats.totalTokens).toBe(inline.stats.totalTokens);
  }, 60_000);
});

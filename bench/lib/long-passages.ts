import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DATA, ROOT } from './common.js';

/**
 * Deterministic wiki-18-format passages of ~500 words drawn from a syllable
 * vocabulary, for memory and load tests where the size of each hit matters
 * (the result cache held top-100 lists of such passages).
 */
export function makeWords(count: number, seed = 7): string[] {
  const syl = [
    'ka',
    'lo',
    'mi',
    'ren',
    'tas',
    'vo',
    'qui',
    'bel',
    'dor',
    'fen',
    'gra',
    'hu',
    'jin',
    'mar',
    'nel',
    'pos',
  ];
  const rnd = prng(seed);
  const out = new Set<string>();
  while (out.size < count) {
    let w = '';
    const n = 2 + Math.floor(rnd() * 3);
    for (let i = 0; i < n; i++) w += syl[Math.floor(rnd() * syl.length)];
    out.add(w);
  }
  return [...out];
}

export function makeLongPassages(count: number, wordsEach = 500, seed = 11): Array<{ id: string; contents: string }> {
  const words = makeWords(3000, seed);
  const rnd = prng(seed + 1);
  return Array.from({ length: count }, (_, i) => {
    const body: string[] = [];
    for (let j = 0; j < wordsEach; j++) body.push(words[Math.floor(rnd() ** 2 * words.length)] as string);
    return { id: String(i), contents: `"Passage ${i}"\n${body.join(' ')}.` };
  });
}

/** Distinct queries of `n` words from the same vocabulary. */
export function makeQueries(count: number, n = 4, seed = 11): string[] {
  const words = makeWords(3000, seed);
  const rnd = prng(seed + 99);
  const out = new Set<string>();
  while (out.size < count) {
    const q: string[] = [];
    for (let j = 0; j < n; j++) q.push(words[Math.floor(rnd() * 300)] as string);
    out.add(q.join(' '));
  }
  return [...out];
}

function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

/**
 * A BM25-only index of `count` 500-word passages under bench/data (built
 * once, reused): the corpus the outside probe crashed the result cache with.
 */
export function ensureLongIndex(count: number): { indexDir: string; name: string } {
  const name = `long${count}`;
  const indexDir = join(BENCH_DATA, 'long-indexes');
  if (existsSync(join(indexDir, name, 'manifest.json'))) return { indexDir, name };
  mkdirSync(BENCH_DATA, { recursive: true });
  const input = join(BENCH_DATA, `${name}.jsonl`);
  writeFileSync(
    input,
    `${makeLongPassages(count)
      .map((p) => JSON.stringify(p))
      .join('\n')}\n`,
  );
  const bin = join(ROOT, 'bin/build-index.js');
  const args = ['--name', name, '--input', input, '--format', 'wiki18', '--index-dir', indexDir, '--no-dense'];
  const r = spawnSync(process.execPath, [bin, ...args, '--no-progress'], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`building ${name} failed`);
  return { indexDir, name };
}

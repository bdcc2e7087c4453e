/**
 * Generates a wiki-18-format corpus of N passages (~100 words each, like
 * wiki-18's 100-word passages) with a realistic vocabulary: 90% of tokens
 * follow the word frequencies of the real text in ../shared (Zipfian by
 * nature), 10% come from a synthetic Zipf(1.1) tail over 5M rare words, so the
 * vocabulary keeps growing with corpus size as real corpora do (Heaps' law).
 *
 *   node dist/bench/lib/gen-corpus.js --passages 2000000 --out bench/data/gen-2m.jsonl
 */
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { arg, prng, SHARED } from './common.js';

interface Vocab {
  words: string[];
  cdf: Float64Array;
}

export function loadRealVocab(): Vocab {
  const counts = new Map<string, number>();
  const add = (text: string): void => {
    for (const w of text.match(/[A-Za-z][A-Za-z']*|\d+/g) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1);
  };
  const wiki = join(SHARED, 'data/2wiki-200/corpus.jsonl');
  for (const l of readFileSync(wiki, 'utf8').trim().split('\n')) add((JSON.parse(l) as { contents: string }).contents);
  for (const f of ['novel.json', 'medical.json']) {
    const v = JSON.parse(readFileSync(join(SHARED, 'data/graphrag-bench', f), 'utf8')) as unknown;
    for (const d of Array.isArray(v) ? v : [v]) add((d as { context: string }).context);
  }
  const entries = [...counts].sort((a, b) => b[1] - a[1]);
  const cdf = new Float64Array(entries.length);
  let acc = 0;
  entries.forEach(([, c], i) => {
    acc += c;
    cdf[i] = acc;
  });
  for (let i = 0; i < cdf.length; i++) (cdf[i] as number) /= acc;
  return { words: entries.map(([w]) => w), cdf };
}

const SYL = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'sa',
  'to',
  'vi',
  'ze',
  'bor',
  'dan',
  'gel',
  'har',
  'jun',
  'kel',
  'lin',
  'mar',
  'nor',
  'pel',
  'qua',
  'ros',
  'sten',
  'tar',
  'ul',
  'vor',
  'wen',
  'yas',
];

function rareWord(rank: number): string {
  let r = rank;
  let w = '';
  do {
    w += SYL[r % SYL.length];
    r = Math.floor(r / SYL.length);
  } while (r > 0);
  return w;
}

export function makeSampler(seed: number): { passage: (i: number) => { id: string; contents: string } } {
  const vocab = loadRealVocab();
  const rand = prng(seed);
  const TAIL = 5_000_000;
  const s = 1.1;
  // inverse-CDF sampling of a continuous Zipf approximation over [1, TAIL]
  const tail = (): number => {
    const u = rand();
    const a = 1 - s;
    const x = Math.pow(u * (Math.pow(TAIL, a) - 1) + 1, 1 / a);
    return Math.floor(x);
  };
  const real = (): string => {
    const u = rand();
    let lo = 0;
    let hi = vocab.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((vocab.cdf[mid] as number) < u) lo = mid + 1;
      else hi = mid;
    }
    return vocab.words[lo] as string;
  };
  const word = (): string => (rand() < 0.9 ? real() : rareWord(tail()));
  const cap = (w: string): string => w.charAt(0).toUpperCase() + w.slice(1);
  return {
    passage(i: number) {
      const titleWords = 1 + Math.floor(rand() * 3);
      const title = Array.from({ length: titleWords }, () => cap(rand() < 0.5 ? rareWord(tail()) : real())).join(' ');
      const sentences: string[] = [];
      let n = 0;
      const target = 80 + Math.floor(rand() * 40);
      while (n < target) {
        const len = 8 + Math.floor(rand() * 18);
        const ws = Array.from({ length: len }, word);
        ws[0] = cap(ws[0] as string);
        sentences.push(`${ws.join(' ')}.`);
        n += len;
      }
      return { id: String(i), contents: `"${title}"\n${sentences.join(' ')}` };
    },
  };
}

async function main(): Promise<void> {
  const n = Number(arg('passages', '100000'));
  const out = arg('out', `bench/data/gen-${n}.jsonl`) as string;
  if (existsSync(out)) {
    process.stderr.write(`${out} exists; delete it to regenerate\n`);
    return;
  }
  mkdirSync(dirname(out), { recursive: true });
  const sampler = makeSampler(Number(arg('seed', '42')));
  const ws = createWriteStream(out);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    if (!ws.write(`${JSON.stringify(sampler.passage(i))}\n`))
      await new Promise<void>((r) => ws.once('drain', () => r()));
    if (i % 200_000 === 0 && i > 0) process.stderr.write(`  ${i} passages\n`);
  }
  await new Promise<void>((r) => ws.end(() => r()));
  process.stderr.write(`wrote ${n} passages to ${out} in ${((performance.now() - t0) / 1000).toFixed(1)}s\n`);
}

if (process.argv[1]?.endsWith('gen-corpus.js')) void main();

/**
 * Real Wikipedia text scaled past its 1.23M passages, for BM25 at 2M and at
 * wiki-18's 21M. The first 1,232,684 passages are enwiki-1m itself; each
 * further copy c re-cuts every real passage from its own article and renames
 * the article's rare words:
 *
 * - the passage becomes the 100-word window starting (37·c mod 100) words
 *   into the passage and running on into the next passage of the same article
 *   (the passage itself if the article has no next one), so a copy is real
 *   text of the same topic and length, cut elsewhere;
 * - every word whose document frequency in enwiki-1m is at most RARE_DF gets
 *   the copy's tag ("Cousteau" → "Cousteauqb"), so each copy brings its own
 *   rare vocabulary, as new articles about new entities do, while common
 *   words keep their rates. (Without renaming, every rare word's df would grow
 *   with the corpus, so no term would be rarer at 21M than at 1M.)
 *
 *   npm run bench -- scale-corpus --passages 2000000 [--out bench/data/enwiki-2m.jsonl]
 *
 * Validation, written to bench/results/scale-corpus-<n>.json: the real text
 * against the first synthetic copy (the same number of passages): passage
 * lengths, document frequencies (the vocabulary by df band, and the df of the
 * 1,000 commonest words), and co-occurrence (lift of the 200 commonest content
 * words' pairs, correlated between the two).
 */
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ENGLISH_STOPWORDS } from '../../src/text/stopwords.js';
import { arg, BENCH_DATA, writeResult } from '../lib/common.js';

const RARE_DF = 20;
const target = Number(arg('passages', '2000000'));
const input = join(BENCH_DATA, 'enwiki-1m.jsonl');
const out = arg('out', join(BENCH_DATA, `enwiki-scaled-${target}.jsonl`)) as string;
const log = (line: string): void => void process.stderr.write(`${line}\n`);
if (!existsSync(input))
  throw new Error(`${input} is missing: xz -dc ../shared/data/enwiki-1m/passages.jsonl.xz > ${input}`);

interface Passage {
  id: string;
  title: string;
  body: string;
}

async function readAll(): Promise<Passage[]> {
  const all: Passage[] = [];
  const rl = createInterface({ input: createReadStream(input), crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line.trim()) continue;
    const r = JSON.parse(line) as { id: string; contents: string };
    const nl = r.contents.indexOf('\n');
    all.push({ id: r.id, title: r.contents.slice(0, nl), body: r.contents.slice(nl + 1) });
  }
  return all;
}

const WORD = /[\p{L}\p{N}]+/gu;
const words = (text: string): string[] => text.toLowerCase().match(WORD) ?? [];

function documentFrequencies(texts: Iterable<string>): Map<string, number> {
  const df = new Map<string, number>();
  for (const t of texts) for (const w of new Set(words(t))) df.set(w, (df.get(w) ?? 0) + 1);
  return df;
}

/** Where a copy's tag goes: after each rare word (a character no passage holds). */
const MARK = '\u0001';

/** Passage texts with a MARK after every rare word, so a copy only swaps MARK for its tag. */
function markRare(all: Passage[], rare: Set<string>): { titles: string[]; bodies: string[] } {
  const mark = (text: string): string => text.replace(WORD, (w) => (rare.has(w.toLowerCase()) ? w + MARK : w));
  return { titles: all.map((p) => mark(p.title)), bodies: all.map((p) => mark(p.body)) };
}

/** Copy c of passage i: the shifted window, rare words tagged. */
function synthesize(all: Passage[], marked: { titles: string[]; bodies: string[] }, i: number, c: number): string {
  const p = all[i] as Passage;
  const next = all[i + 1];
  const own = (marked.bodies[i] as string).split(/\s+/);
  const run = next && next.title === p.title ? own.concat((marked.bodies[i + 1] as string).split(/\s+/)) : own;
  const shift = run.length > own.length ? (37 * c) % Math.max(1, run.length - own.length + 1) : 0;
  const tag = `q${c.toString(36)}`;
  return `${marked.titles[i] as string}\n${run.slice(shift, shift + own.length).join(' ')}`.replaceAll(MARK, tag);
}

function stats(texts: string[], common: string[], pairsOf: string[]) {
  const lengths = texts.map((t) => words(t).length).sort((a, b) => a - b);
  const q = (f: number): number => lengths[Math.min(lengths.length - 1, Math.floor(f * lengths.length))] as number;
  const df = documentFrequencies(texts);
  const bands = [1, 2, 10, 100, 1000, 10000, Infinity];
  const vocabulary: Record<string, number> = {};
  for (let b = 0; b < bands.length - 1; b++) {
    const lo = bands[b] as number;
    const hi = bands[b + 1] as number;
    vocabulary[`df ${lo}${hi === Infinity ? '+' : `-${hi - 1}`}`] = [...df.values()].filter(
      (v) => v >= lo && v < hi,
    ).length;
  }
  // pair lifts among the commonest content words
  const index = new Map(pairsOf.map((w, i) => [w, i]));
  const k = pairsOf.length;
  const single = new Float64Array(k);
  const pair = new Float64Array(k * k);
  for (const t of texts) {
    const present = [...new Set(words(t))].map((w) => index.get(w)).filter((x): x is number => x !== undefined);
    for (const a of present) {
      single[a] = (single[a] as number) + 1;
      for (const b of present) if (a < b) pair[a * k + b] = (pair[a * k + b] as number) + 1;
    }
  }
  const lifts: number[] = [];
  for (let a = 0; a < k; a++)
    for (let b = a + 1; b < k; b++) {
      const pab = (pair[a * k + b] as number) / texts.length;
      const pa = (single[a] as number) / texts.length;
      const pb = (single[b] as number) / texts.length;
      lifts.push(pab > 0 && pa > 0 && pb > 0 ? Math.log(pab / (pa * pb)) : NaN);
    }
  return {
    passages: texts.length,
    words: { mean: lengths.reduce((s, v) => s + v, 0) / lengths.length, p10: q(0.1), p50: q(0.5), p90: q(0.9) },
    vocabulary,
    commonDf: common.map((w) => (df.get(w) ?? 0) / texts.length),
    lifts,
  };
}

function pearson(x: number[], y: number[]): number {
  const pairs = x.map((v, i) => [v, y[i] as number]).filter(([a, b]) => Number.isFinite(a) && Number.isFinite(b));
  const n = pairs.length;
  const mx = pairs.reduce((s, [a]) => s + (a as number), 0) / n;
  const my = pairs.reduce((s, [, b]) => s + (b as number), 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (const [a, b] of pairs) {
    sxy += ((a as number) - mx) * ((b as number) - my);
    sxx += ((a as number) - mx) ** 2;
    syy += ((b as number) - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy);
}

const t0 = performance.now();
const all = await readAll();
log(`read ${all.length} real passages`);
const realTexts = all.map((p) => `${p.title}\n${p.body}`);
const df = documentFrequencies(realTexts);
const rare = new Set([...df].filter(([, v]) => v <= RARE_DF).map(([w]) => w));
log(`${df.size} words, ${rare.size} of them rare (df ≤ ${RARE_DF})`);

const marked = markRare(all, rare);
const ws = createWriteStream(out);
let written = 0;
let pending: string[] = [];
const write = async (line: string): Promise<void> => {
  pending.push(line);
  if (pending.length < 4096) return;
  const chunk = pending.join('');
  pending = [];
  if (!ws.write(chunk)) await once(ws, 'drain');
};
for (let i = 0; i < all.length && written < target; i++, written++) {
  await write(`${JSON.stringify({ id: (all[i] as Passage).id, contents: realTexts[i] })}\n`);
}
const firstCopy: string[] = [];
for (let c = 1; written < target; c++) {
  for (let i = 0; i < all.length && written < target; i++, written++) {
    const contents = synthesize(all, marked, i, c);
    if (c === 1) firstCopy.push(contents);
    await write(`${JSON.stringify({ id: `${c}-${(all[i] as Passage).id}`, contents })}\n`);
  }
  log(`copy ${c}: ${written} passages written`);
}
ws.end(pending.join(''));
await once(ws, 'finish');
log(`wrote ${written} passages to ${out} in ${((performance.now() - t0) / 1000).toFixed(0)}s; validating…`);

const common = [...df]
  .sort((a, b) => b[1] - a[1])
  .slice(0, 1000)
  .map(([w]) => w);
const pairsOf = common.filter((w) => !ENGLISH_STOPWORDS.has(w) && /\p{L}/u.test(w)).slice(0, 200);
const sample = firstCopy.length > 0 ? firstCopy : [];
const real = stats(realTexts.slice(0, sample.length || realTexts.length), common, pairsOf);
const synth = sample.length > 0 ? stats(sample, common, pairsOf) : null;
writeResult(`scale-corpus-${target}`, {
  passages: written,
  source: 'enwiki-1m (1,232,684 real passages) and copies re-cut from their own articles, rare words tagged per copy',
  rareDf: RARE_DF,
  real: { passages: real.passages, words: real.words, vocabulary: real.vocabulary },
  synthetic: synth && { passages: synth.passages, words: synth.words, vocabulary: synth.vocabulary },
  agreement: synth && {
    commonDfCorrelation: pearson(real.commonDf, synth.commonDf),
    commonDfMeanAbsRatio:
      real.commonDf.reduce((s, v, i) => s + Math.abs(Math.log((synth.commonDf[i] as number) / v)), 0) /
      real.commonDf.length,
    pairLiftCorrelation: pearson(real.lifts, synth.lifts),
  },
});

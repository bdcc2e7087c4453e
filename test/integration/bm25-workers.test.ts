import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Bm25Builder } from '../../src/index/bm25/bm25-builder.js';
import { Inverter } from '../../src/index/bm25/inverter.js';
import { mergeRuns, splitTerms } from '../../src/index/bm25/merge.js';
import { FileWriter } from '../../src/index/bm25/run-files.js';
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
  // batches of 2,048 chunks alternate between 2 workers. 12k chunks with a
  // 20k-posting budget spill runs smaller than a batch (the merge sees many
  // runs per worker); 24k chunks with a 200k budget spill runs that span
  // several batches, so inside one run's list the other worker's postings
  // cut in batch by batch
  for (const [chunks, budget] of [
    [12_000, 20_000],
    [24_000, 200_000],
  ] as const) {
    it(`merges interleaved runs from two workers into the same bytes as one in-memory pass (${chunks} chunks, budget ${budget})`, async () => {
      const docs = texts(chunks);
      const inline = await buildWith(`inline-${chunks}`, docs, 0, 10_000_000);
      const workers = await buildWith(`workers-${chunks}`, docs, 2, budget);
      expect(inline.stats.runs).toBe(1); // its postings, written once as one run
      expect(workers.stats.runs).toBeGreaterThan(budget < 50_000 ? 4 : 1);
      expect(workers.norms.equals(inline.norms)).toBe(true);
      expect(workers.terms).toEqual(inline.terms);
      expect(workers.postings.equals(inline.postings)).toBe(true);
      expect(workers.stats.postings).toBe(inline.stats.postings);
      expect(workers.stats.totalTokens).toBe(inline.stats.totalTokens);
    }, 60_000);
  }

  it('merges term ranges on three workers in parallel (two each) into the same bytes as one in-memory pass', async () => {
    // a vocabulary of thousands of terms per run, so runs carry many samples to cut at
    let seed = 5;
    const rand = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const docs = Array.from({ length: 9_000 }, () =>
      Array.from({ length: 10 }, () => `t${Math.floor(rand() * rand() * 30_000).toString(36)}`).join(' '),
    );
    const inline = await buildWith('inline3', docs, 0, 10_000_000);
    const workers = await buildWith('workers3', docs, 3, 30_000);
    expect(workers.stats.runs).toBeGreaterThan(3);
    expect(workers.stats.mergeParts).toBe(6); // two term ranges per worker
    expect(workers.terms).toEqual(inline.terms);
    expect(workers.postings.equals(inline.postings)).toBe(true);
    expect(workers.norms.equals(inline.norms)).toBe(true);
  }, 60_000);

  it('runs the whileMerging hook once, before the first term is written, and cleans up when it throws', async () => {
    const docs = texts(12_000);
    const dir = join(tmp.dir, 'hook');
    mkdirSync(dir, { recursive: true });
    const build = async (hook: () => void): Promise<string[]> => {
      const events: string[] = [];
      const builder = new Bm25Builder(createEnglishAnalyzer(), {
        maxPostingsInMemory: 20_000,
        tempDir: dir,
        workers: 2,
      });
      for (let i = 0; i < docs.length; i++) {
        const wait = builder.add(i, docs[i] as string);
        if (wait) await wait;
      }
      await builder.finish(
        join(dir, 'postings'),
        join(dir, 'norms'),
        (entries) => {
          for (const e of entries) void e;
          events.push('terms');
        },
        () => {
          events.push('hook');
          hook();
        },
      );
      return events;
    };
    const events = await build(() => undefined);
    expect(events[0]).toBe('hook');
    expect(events.filter((e) => e === 'hook')).toHaveLength(1);
    expect(events.filter((e) => e === 'terms').length).toBeGreaterThan(1);
    await expect(
      build(() => {
        throw new Error('duplicate id');
      }),
    ).rejects.toThrow('duplicate id');
    // no run or part file is left behind by the failed build
    expect(readdirSync(dir).filter((f) => f !== 'postings' && f !== 'norms')).toEqual([]);
  }, 60_000);

  it('spills the same runs whether it keeps its vocabulary across spills or starts over', () => {
    const dir = join(tmp.dir, 'vocab');
    mkdirSync(dir, { recursive: true });
    let seed = 3;
    const rand = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const docs = Array.from({ length: 3_000 }, () =>
      Array.from({ length: 8 }, () => `w${Math.floor(rand() * rand() * 5_000).toString(36)}`).join(' '),
    );
    const merged = (
      cap: number,
      name: string,
      maxPostings = 2_000,
    ): { bytes: Buffer; terms: TermEntry[]; runs: number } => {
      const inverter = new Inverter(createEnglishAnalyzer(), maxPostings, dir, name, cap);
      docs.forEach((d, i) => inverter.add(i, d));
      inverter.spill();
      const out = new FileWriter(join(dir, `${name}.out`));
      const terms = [...mergeRuns(inverter.runs, out)];
      out.close();
      return { bytes: readFileSync(join(dir, `${name}.out`)), terms, runs: inverter.runs.length };
    };
    const kept = merged(1 << 20, 'kept');
    const reset = merged(50, 'reset'); // past 50 terms at every spill: a fresh vocabulary each run
    expect(kept.runs).toBeGreaterThan(5);
    expect(reset.runs).toBe(kept.runs);
    expect(reset.terms).toEqual(kept.terms);
    expect(reset.bytes.equals(kept.bytes)).toBe(true);
    // and both are the one run of a budget that never fills, copied
    const whole = merged(1 << 20, 'whole', 1_000_000);
    expect(whole.runs).toBe(1);
    expect(whole.terms).toEqual(kept.terms);
    expect(whole.bytes.equals(kept.bytes)).toBe(true);
  });

  it('merging consecutive term ranges gives the bytes and dictionary of one whole merge', () => {
    const dir = join(tmp.dir, 'ranges');
    mkdirSync(dir, { recursive: true });
    const inverter = new Inverter(createEnglishAnalyzer(), 8_000, dir, 'r');
    let seed = 9;
    const rand = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let i = 0; i < 4_000; i++) {
      inverter.add(i, Array.from({ length: 8 }, () => `w${Math.floor(rand() * 6_000).toString(36)}`).join(' '));
    }
    inverter.spill();
    const runs = inverter.runs;
    expect(runs.length).toBeGreaterThan(2);
    const whole = new FileWriter(join(dir, 'whole'));
    const wholeTerms = [...mergeRuns(runs, whole)];
    whole.close();
    const wholeBytes = readFileSync(join(dir, 'whole'));
    const cut = fc.oneof(
      fc.constantFrom('', 'w', 'w0', 'wzz', 'x', '\uffff'),
      fc.integer({ min: 0, max: 6_000 }).map((n) => `w${n.toString(36)}`),
    );
    let k = 0;
    fc.assert(
      fc.property(fc.uniqueArray(cut, { maxLength: 4 }), (cuts) => {
        const bounds = [...cuts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const parts: Buffer[] = [];
        const terms: typeof wholeTerms = [];
        let base = 0;
        [undefined, ...bounds].forEach((lo, i) => {
          const hi = bounds[i];
          const path = join(dir, `part${k++}`);
          const out = new FileWriter(path);
          const range = { ...(lo !== undefined ? { lo } : {}), ...(hi !== undefined ? { hi } : {}) };
          for (const e of mergeRuns(runs, out, range)) terms.push({ ...e, offset: base + e.offset });
          out.close();
          parts.push(readFileSync(path));
          base += out.offset;
        });
        expect(terms).toEqual(wholeTerms);
        expect(Buffer.concat(parts).equals(wholeBytes)).toBe(true);
      }),
      { numRuns: 30 },
    );
    // cuts by bytes: each of four parts holds about a quarter of the run bytes
    const bounds = splitTerms(runs, 4);
    expect(bounds.length).toBe(3);
    expect([...bounds].sort()).toEqual(bounds);
    const sizes = [undefined, ...bounds].map((lo, i) => {
      const hi = bounds[i];
      const range = { ...(lo !== undefined ? { lo } : {}), ...(hi !== undefined ? { hi } : {}) };
      const out = new FileWriter(join(dir, `quarter${i}`));
      for (const e of mergeRuns(runs, out, range)) void e;
      out.close();
      return out.offset;
    });
    for (const size of sizes) expect(size / wholeBytes.length).toBeGreaterThan(0.15);
  });

  it('merges runs of three interleaved inverters into the same bytes whatever order the runs are given in', () => {
    const dir = join(tmp.dir, 'order');
    mkdirSync(dir, { recursive: true });
    const docs = texts(6_000);
    // three inverters take batches of 64 chunks in turn (as workers do with 2,048), spilling often
    const inverters = [0, 1, 2].map((w) => new Inverter(createEnglishAnalyzer(), 3_000, dir, `o${w}`));
    for (let start = 0; start < docs.length; start += 64) {
      const inv = inverters[(start / 64) % 3] as Inverter;
      inv.addBatch(start, docs.slice(start, start + 64), new Uint32Array(64));
    }
    for (const inv of inverters) inv.spill();
    const runs = inverters.flatMap((inv) => inv.runs);
    expect(runs.length).toBeGreaterThan(9);
    const one = new Inverter(createEnglishAnalyzer(), 10_000_000, dir, 'one');
    docs.forEach((d, i) => one.add(i, d));
    one.spill();
    const merge = (given: typeof runs, name: string): { bytes: Buffer; terms: TermEntry[] } => {
      const out = new FileWriter(join(dir, name));
      const terms = [...mergeRuns(given, out)];
      out.close();
      return { bytes: readFileSync(join(dir, name)), terms };
    };
    const expected = merge(one.runs, 'one.out');
    let k = 0;
    fc.assert(
      fc.property(fc.shuffledSubarray(runs, { minLength: runs.length }), (order) => {
        const got = merge(order, `order${k++}`);
        expect(got.terms).toEqual(expected.terms);
        expect(got.bytes.equals(expected.bytes)).toBe(true);
      }),
      { numRuns: 20, examples: [[[...runs].reverse()]] },
    );
  });
});

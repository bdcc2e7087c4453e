/**
 * Child process for bm25-alternatives: indexes the first N passages of a
 * generated corpus with one engine — minisearch (in the JS heap), SQLite
 * FTS5 (bm25()), or ours — using our analyzer for all three, then replays
 * real questions. Prints one JSON line.
 */
import Database from 'better-sqlite3';
import MiniSearch from 'minisearch';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildIndex } from '../src/build/build-index.js';
import { openCorpus } from '../src/search/open-corpus.js';
import { createEnglishAnalyzer } from '../src/text/analyzer.js';
import { silentLogger } from '../src/util/log.js';
import { arg, rssMiB, summarize, writeResult } from './lib/common.js';
import { loadRealQuestions } from './lib/queries.js';

const engine = arg('engine') as string;
const input = arg('input') as string;
const n = Number(arg('n'));
const work = arg('work') as string;
const queries = loadRealQuestions().slice(0, Number(arg('queries', '2000')));
const analyzer = createEnglishAnalyzer();

function readPassages(): Array<{ id: string; contents: string }> {
  const lines = readFileSync(input, 'utf8').split('\n', n);
  return lines.filter(Boolean).map((l) => JSON.parse(l) as { id: string; contents: string });
}

async function run(): Promise<Record<string, number | string>> {
  if (engine === 'minisearch') {
    const docs = readPassages();
    const base = rssMiB();
    const t0 = performance.now();
    const ms = new MiniSearch<{ id: string; contents: string }>({
      fields: ['contents'],
      tokenize: (text) => analyzer.analyze(text),
      processTerm: (t) => t,
      searchOptions: { tokenize: (text) => analyzer.analyze(text), processTerm: (t) => t, combineWith: 'OR' },
    });
    ms.addAll(docs);
    const buildS = (performance.now() - t0) / 1000;
    docs.length = 0;
    (globalThis as { gc?: () => void }).gc?.();
    const heapMiB = process.memoryUsage().heapUsed / 2 ** 20;
    const lat = queries.map((q) => {
      const t = performance.now();
      ms.search(q).slice(0, 100);
      return performance.now() - t;
    });
    return { buildS, indexMiB: heapMiB, extraRssMiB: rssMiB() - base, ...pick(summarize(lat)) };
  }
  if (engine === 'fts5') {
    const docs = readPassages();
    const path = join(work, `fts5-${n}.sqlite`);
    rmSync(path, { force: true });
    const db = new Database(path);
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    const t0 = performance.now();
    // pre-analyzed with our analyzer; FTS5 then only splits on spaces
    db.exec("CREATE VIRTUAL TABLE fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 0 tokenchars ''.,''')");
    const ins = db.prepare('INSERT INTO fts(rowid, body) VALUES (?, ?)');
    db.transaction(() => docs.forEach((d, i) => ins.run(i, analyzer.analyze(d.contents).join(' '))))();
    db.exec("INSERT INTO fts(fts) VALUES('optimize')");
    const buildS = (performance.now() - t0) / 1000;
    const size = db.prepare('SELECT page_count * page_size AS b FROM pragma_page_count, pragma_page_size').get() as {
      b: number;
    };
    const q = db.prepare('SELECT rowid, bm25(fts) AS s FROM fts WHERE fts MATCH ? ORDER BY s LIMIT 100');
    const lat: number[] = [];
    for (const text of queries) {
      const terms = [...new Set(analyzer.analyze(text))].map((t) => `"${t.replace(/"/g, '""')}"`);
      if (terms.length === 0) continue;
      const t = performance.now();
      q.all(terms.join(' OR '));
      lat.push(performance.now() - t);
    }
    db.close();
    return { buildS, indexMiB: size.b / 2 ** 20, extraRssMiB: rssMiB(), ...pick(summarize(lat)) };
  }
  // ours: the real build-index pipeline on the same first n passages
  const docs = readPassages();
  const sub = join(work, `sub-${n}.jsonl`);
  const { writeFileSync } = await import('node:fs');
  writeFileSync(sub, docs.map((d) => JSON.stringify(d)).join('\n') + '\n');
  docs.length = 0;
  const t0 = performance.now();
  const s = await buildIndex({
    name: `alt-${n}`,
    input: sub,
    format: 'wiki18',
    indexDir: join(work, 'idx'),
    chunkSize: 0,
    chunkOverlap: 0,
    bm25: { k1: 0.9, b: 0.4 },
    maxPostingsInMemory: 16_000_000,
    threads: 2,
    dense: null,
    resume: false,
    rebuildCommand: '',
    log: silentLogger,
    progress: false,
  });
  const buildS = (performance.now() - t0) / 1000;
  const before = rssMiB();
  const c = openCorpus(join(work, 'idx'), `alt-${n}`);
  const lat = queries.map((q) => {
    const t = performance.now();
    c.bm25.search(q, 100);
    return performance.now() - t;
  });
  return {
    buildS,
    indexMiB: (s.manifest.files['bm25.postings']!.bytes + s.manifest.files['bm25.norms']!.bytes) / 2 ** 20,
    extraRssMiB: rssMiB() - before,
    ...pick(summarize(lat)),
  };
}

function pick(s: { p50: number; p99: number }): { p50: number; p99: number } {
  return { p50: s.p50, p99: s.p99 };
}

const result = await run();
process.stdout.write(`${JSON.stringify({ engine, n, ...result })}\n`);
if (arg('save')) writeResult(`bm25-alt-${engine}-${n}`, result);

/**
 * Renders BENCHMARKS.md's summary table from the results the benches wrote
 * (bench/results/*.json): one row per result file, its headline figures,
 * the date and the commit it ran at. The table sits between the
 * `<!-- summary:start -->` and `<!-- summary:end -->` markers; nothing in it
 * is typed by hand. `--check` fails when the file is out of date.
 *
 *   npm run build:bench && node dist/bench/render-summary.js [--check]
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'prettier';
import { BENCH_RESULTS, ROOT } from './lib/common.js';

type Result = Record<string, unknown> & { date?: string; commit?: string };
type Row = Record<string, string | number>;

/** The headline of each result file: what it measured and the figure that answers it. */
const HEADLINES: Record<string, { what: string; command: string; figure: (r: Result) => string }> = {
  'memory-soak': {
    what: 'RSS under 100k distinct top-100 queries and the adversarial patterns',
    command: 'node dist/bench/memory-soak.js',
    figure: (r) => {
      const row = rows(r)[0] ?? {};
      return `max ${row['max RSS MiB']} MiB (bound ${row['bound MiB']}), ${row['non-200 answers']} non-200`;
    },
  },
  'event-loop-bm25': {
    what: '/health p99 under BM25 load (8 × 256-query batches / 256 clients)',
    command: 'node dist/bench/event-loop-bm25.js',
    figure: (r) =>
      rows(r)
        .slice(0, 2)
        .map((x) => `${fmt(x['health p99 ms'])} ms`)
        .join(' / '),
  },
  'event-loop': {
    what: '/health p99 with the encoder saturated',
    command: 'node dist/bench/event-loop.js',
    figure: (r) => `${fmt(rows(r)[0]?.['/health p99 ms'])} ms`,
  },
  load: {
    what: '256 clients × 60 s, BERT-base: errors (hybrid on / off, dense)',
    command: 'node dist/bench/load.js',
    figure: (r) =>
      rows(r)
        .map((x) => `${x['errors']}`)
        .join(' / '),
  },
  'load-tiny': {
    what: '256 clients, tiny e5: errors (hybrid on / off, dense)',
    command: 'node dist/bench/load.js --model ../shared/models/tiny-e5 --tag tiny',
    figure: (r) =>
      rows(r)
        .map((x) => `${x['errors']}`)
        .join(' / '),
  },
  soak: {
    what: 'steady hybrid load: requests, errors, RSS at the end',
    command: 'node dist/bench/soak.js',
    figure: (r) => {
      const x = rows(r)[0] ?? {};
      return `${x['requests']} requests, ${x['errors']} errors, ${x['RSS at end MiB']} MiB`;
    },
  },
  determinism: {
    what: 'the same 300 queries in 3 fresh processes',
    command: 'node dist/bench/determinism.js',
    figure: (r) => (r['identical'] === true ? 'byte-identical' : 'differ'),
  },
  'stateless-dispatch': {
    what: 'stateless MCP call, direct dispatch / public SDK path (median p50)',
    command: 'node dist/bench/experiments/stateless-dispatch.js',
    figure: (r) =>
      rows(r)
        .map((x) => `${fmt(x['median of rounds ms'])} ms`)
        .join(' / '),
  },
};

function rows(r: Result, key = 'rows'): Row[] {
  const v = r[key];
  return Array.isArray(v) ? (v as Row[]) : [];
}

function fmt(v: unknown): string {
  if (typeof v !== 'number') return String(v ?? '?');
  return Number.isInteger(v) ? String(v) : v.toFixed(v < 1 ? 2 : 1);
}

export function renderSummary(results: Record<string, Result>): string {
  const lines = [
    '| what | figure | run | command |',
    '| --- | --- | --- | --- |',
    ...Object.entries(HEADLINES)
      .filter(([name]) => results[name])
      .map(([name, h]) => {
        const r = results[name] as Result;
        const run = `${(r.date ?? '').slice(0, 10)} at ${r.commit ?? 'unknown'}`;
        return `| ${h.what} | ${h.figure(r)} | ${run} | \`${h.command}\` ([json](bench/results/${name}.json)) |`;
      }),
  ];
  return lines.join('\n');
}

const path = join(ROOT, 'BENCHMARKS.md');
const results: Record<string, Result> = {};
if (existsSync(BENCH_RESULTS)) {
  for (const f of readdirSync(BENCH_RESULTS).filter((n) => n.endsWith('.json'))) {
    results[f.replace(/\.json$/, '')] = JSON.parse(readFileSync(join(BENCH_RESULTS, f), 'utf8')) as Result;
  }
}
const doc = readFileSync(path, 'utf8');
const start = '<!-- summary:start -->';
const end = '<!-- summary:end -->';
const a = doc.indexOf(start);
const b = doc.indexOf(end);
if (a === -1 || b === -1) throw new Error(`BENCHMARKS.md lacks the ${start} … ${end} markers`);
// formatted as `npm run check`'s prettier would, so the check compares like with like
const next = await format(`${doc.slice(0, a + start.length)}\n\n${renderSummary(results)}\n\n${doc.slice(b)}`, {
  ...(JSON.parse(readFileSync(join(ROOT, '.prettierrc.json'), 'utf8')) as object),
  parser: 'markdown',
});
if (process.argv.includes('--check')) {
  if (next !== doc) {
    process.stderr.write('BENCHMARKS.md summary is out of date: run node dist/bench/render-summary.js\n');
    process.exitCode = 1;
  }
} else {
  writeFileSync(path, next);
  process.stdout.write(`rendered ${Object.keys(results).length} results into ${path}\n`);
}

import { execSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { percentile } from '../../src/util/percentile.js';

/** Repo root, from dist/bench/lib or bench/lib. */
export const ROOT = (() => {
  const here = dirname(fileURLToPath(import.meta.url));
  return here.includes(`${'dist'}/bench`) ? resolve(here, '../../..') : resolve(here, '../..');
})();
export const SHARED = resolve(process.env['RETRIEVER_MCP_SHARED'] ?? join(ROOT, '..', 'shared'));
export const BENCH_DATA = join(ROOT, 'bench', 'data');
export const BENCH_RESULTS = join(ROOT, 'bench', 'results');

/** "100k", "1m", "2m": how bench data files name a corpus size. */
export function sizeLabel(n: number): string {
  return n >= 1e6 ? `${n / 1e6}m` : `${n / 1e3}k`;
}

/** mulberry32: a small seeded PRNG so generated data is identical on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function summarize(samplesMs: number[]): { p50: number; p90: number; p99: number; mean: number; n: number } {
  const s = [...samplesMs].sort((a, b) => a - b);
  return {
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    mean: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length),
    n: s.length,
  };
}

export function printTable(title: string, rows: Array<Record<string, string | number>>): void {
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const fmt = (v: string | number | undefined): string =>
    v === undefined ? '' : typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(v < 10 ? 3 : 1)) : v;
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => fmt(r[c]).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  process.stdout.write(`\n${title}\n`);
  process.stdout.write(`${line(cols)}\n`);
  process.stdout.write(`${line(widths.map((w) => '-'.repeat(w)))}\n`);
  for (const r of rows) process.stdout.write(`${line(cols.map((c) => fmt(r[c])))}\n`);
}

/** The checkout's commit (with "+" when it has uncommitted changes), recorded beside every result. */
function gitCommit(): string {
  try {
    const head = execSync('git rev-parse --short HEAD', { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execSync('git status --porcelain --untracked-files=no', { cwd: ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${head}+` : head;
  } catch {
    return 'unknown';
  }
}

/** The machine a result was taken on, recorded beside it (BENCHMARKS.md prints it). */
export function machine(): { cpus: number; cpu: string; memGiB: number; node: string; os: string } {
  const list = cpus();
  return {
    cpus: list.length,
    cpu: list[0]?.model.trim() ?? 'unknown',
    memGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    os: `${process.platform} ${process.arch}`,
  };
}

/** How this run was started, as `npm run bench -- NAME ARGS` (the suite is the script's file name). */
function benchCommand(): string {
  const script = (process.argv[1] ?? '').replace(/^.*\//, '').replace(/\.js$/, '');
  return ['npm run bench --', script, ...process.argv.slice(2)].join(' ');
}

export function writeResult(name: string, data: unknown): string {
  mkdirSync(BENCH_RESULTS, { recursive: true });
  const path = join(BENCH_RESULTS, `${name}.json`);
  const commit = gitCommit();
  const record = {
    date: new Date().toISOString(),
    commit,
    command: benchCommand(),
    machine: machine(),
    wall_s: Math.round(process.uptime()),
    ...(data as object),
  };
  writeFileSync(path, `${JSON.stringify(record, null, 2)}\n`);
  process.stdout.write(`\nwrote ${path}\n`);
  return path;
}

export function arg(name: string, fallback?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  return fallback;
}

export function rssMiB(): number {
  return process.memoryUsage().rss / 2 ** 20;
}

/** The onnxruntime-node the product runs here, as installed (a bench may load another beside it). */
export function installedOrtVersion(): string {
  return (
    JSON.parse(readFileSync(join(ROOT, 'node_modules/onnxruntime-node/package.json'), 'utf8')) as { version: string }
  ).version;
}

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DATA, ROOT, sizeLabel } from './common.js';

/**
 * Runs a bench probe in its own process (so its memory is its own) under
 * /usr/bin/time for peak RSS; the probe prints one JSON object on stdout.
 */
export function runProbe(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Record<string, unknown> & { maxRssMiB?: number; wallS: number } {
  const useTime = existsSync('/usr/bin/time');
  const cmd = useTime ? '/usr/bin/time' : process.execPath;
  const argv = useTime ? ['-f', '__MAXRSS__%M', process.execPath, script, ...args] : [script, ...args];
  const t0 = performance.now();
  const r = spawnSync(cmd, argv, { encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 1 << 28 });
  const wallS = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`${script} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  const m = /__MAXRSS__(\d+)/.exec(r.stderr);
  const lines = r.stdout.trim().split('\n');
  const json =
    lines.length > 0 && lines[lines.length - 1]?.startsWith('{')
      ? (JSON.parse(lines[lines.length - 1] as string) as Record<string, unknown>)
      : {};
  return { ...json, wallS, ...(m ? { maxRssMiB: Number(m[1]) / 1024 } : {}) };
}

export function runCommand(
  cmd: string,
  args: string[],
): { wallS: number; maxRssMiB?: number; stdout: string; stderr: string } {
  const useTime = existsSync('/usr/bin/time');
  const t0 = performance.now();
  const r = spawnSync(useTime ? '/usr/bin/time' : cmd, useTime ? ['-f', '__MAXRSS__%M', cmd, ...args] : args, {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const wallS = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  const m = /__MAXRSS__(\d+)/.exec(r.stderr);
  return { wallS, stdout: r.stdout, stderr: r.stderr, ...(m ? { maxRssMiB: Number(m[1]) / 1024 } : {}) };
}

/**
 * Runs the real build-index CLI (under /usr/bin/time) on a wiki-18-format corpus, what every
 * scale bench builds; `extra` flags follow the four common ones.
 */
export function buildWiki18Index(
  name: string,
  input: string,
  indexDir: string,
  extra: string[] = [],
): ReturnType<typeof runCommand> {
  return runCommand(process.execPath, [
    join(ROOT, 'bin/build-index.js'),
    ...['--name', name, '--input', input, '--format', 'wiki18', '--index-dir', indexDir],
    ...extra,
  ]);
}

/** The generated wiki-18-style corpus of `n` passages, bench/data/gen-<size>.jsonl, generated on first use. */
export function ensureGenCorpus(n: number): string {
  const path = join(BENCH_DATA, `gen-${sizeLabel(n)}.jsonl`);
  if (!existsSync(path)) {
    runCommand(process.execPath, [join(ROOT, 'dist/bench/lib/gen-corpus.js'), '--passages', String(n), '--out', path]);
  }
  return path;
}

/** The JSON object a peer prints as the last line of its stdout. */
export function lastJsonLine<T = Record<string, unknown>>(stdout: string): T {
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as T;
}

/** Seconds of build-index's whole text and BM25 phase (read, invert, id indexes, merge), from its summary line. */
export function textPhaseSeconds(stderr: string): number {
  const m = /text and BM25 phase: \S+ chunks in ([\d.]+)s/.exec(stderr);
  return m ? Number(m[1]) : NaN;
}

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './common.js';

export interface BenchServer {
  url: string;
  pid: number;
  child: ChildProcess;
  readyMs: number;
  stop(): Promise<number | null>;
}

/**
 * Starts `retriever-mcp --transport http --port 0 …` and waits for /ready; readyMs is spawn → ready.
 * `node` adds Node flags (an `--import` hook), `env` variables.
 */
export async function startServer(
  args: string[],
  opts: { node?: string[]; env?: NodeJS.ProcessEnv; waitForReady?: boolean } = {},
): Promise<BenchServer> {
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [
      ...(opts.node ?? []),
      join(ROOT, 'bin/retriever-mcp.js'),
      ...['--transport', 'http', '--port', '0', '--log-level', 'warn', ...args],
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ...opts.env },
    },
  );
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  // with --log-level warn the listening line is not printed; find the port from /proc
  const url = await new Promise<string>((resolve, reject) => {
    const poll = setInterval(() => {
      const port = listeningPort(child.pid as number);
      if (port) {
        clearInterval(poll);
        resolve(`http://127.0.0.1:${port}`);
      }
    }, 50);
    void exited.then((c) => {
      clearInterval(poll);
      reject(new Error(`server exited (${c}): ${err}`));
    });
  });
  while (opts.waitForReady !== false) {
    const r = await fetch(`${url}/ready`).catch(() => undefined);
    if (r?.status === 200) break;
    await new Promise((res) => setTimeout(res, 20));
  }
  return {
    url,
    pid: child.pid as number,
    child,
    readyMs: performance.now() - t0,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

function listeningPort(pid: number): number | undefined {
  try {
    const inodes = new Set<string>();
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      const l = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const m = /socket:\[(\d+)\]/.exec(l);
      if (m) inodes.add(m[1] as string);
    }
    for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] === '0A' && inodes.has(cols[9] as string))
        return parseInt((cols[1] as string).split(':')[1] as string, 16);
    }
  } catch {
    return undefined;
  }
  return undefined;
}

export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The anonymous part of a process's resident memory (heaps, arenas: no pages of mapped files), MiB. */
export function anonOf(pid: number): number {
  const m = /^Anonymous:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Resident memory of a process and its descendants, MiB. */
export function treeRssMiB(pid: number): number {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const ppid = Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${d}/status`, 'utf8'))?.[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    } catch {
      // gone meanwhile
    }
  }
  let kib = 0;
  const visit = (p: number): void => {
    try {
      kib += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      return;
    }
    for (const c of children.get(p) ?? []) visit(c);
  };
  visit(pid);
  return kib / 1024;
}

/** A server started by hand and named on the command line (`--server name=URL,pid=…,started=…`). */
export interface ServerSpec {
  name: string;
  url: string;
  pid?: number;
  /** Wall clock (ms) at launch, to time the first answer. */
  started?: number;
  /** Seconds from launch to the first answer, measured by hand (when the servers could not start alone). */
  first?: number;
  /** `index=PATH[:PATH…]`: what the server reads from disk (its index files, and a corpus file it loads). */
  index?: string[];
  /** `build=SECONDS`: the index build's wall time, measured by hand. */
  build?: number;
  /** Any other key=value of the spec (e.g. tool=search). */
  extra: Record<string, string>;
}

/** Every `--server name=URL[,key=value…]` in argv; at least one. */
export function serverSpecs(argv: readonly string[]): ServerSpec[] {
  const out: ServerSpec[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] !== '--server') continue;
    const [head, ...opts] = (argv[i + 1] ?? '').split(',');
    const [name, url] = (head ?? '').split(/=(.*)/s) as [string, string];
    const o = Object.fromEntries(opts.map((kv) => kv.split(/=(.*)/s).slice(0, 2) as [string, string]));
    const { pid, started, first, index, build, ...extra } = o;
    out.push({
      name,
      url: url.replace(/\/$/, ''),
      ...(pid ? { pid: Number(pid) } : {}),
      ...(started ? { started: Number(started) } : {}),
      ...(first ? { first: Number(first) } : {}),
      ...(index ? { index: index.split(':') } : {}),
      ...(build ? { build: Number(build) } : {}),
      extra,
    });
  }
  if (out.length === 0) throw new Error('name at least one --server name=URL[,pid=PID][,started=MS]');
  return out;
}

/** MiB on disk of files and folders (recursively), as `du --apparent-size` counts them. */
export function diskMiB(paths: readonly string[]): number {
  const size = (p: string): number => {
    const st = statSync(p);
    return st.isDirectory() ? readdirSync(p).reduce((sum, f) => sum + size(join(p, f)), 0) : st.size;
  };
  return paths.reduce((sum, p) => sum + size(p), 0) / 2 ** 20;
}

/** What a result records of a server's index: its size on disk and build time, where the spec gave them. */
export function indexFigures(s: ServerSpec): { index_mib: number | null; build_s: number | null } {
  return { index_mib: s.index ? diskMiB(s.index) : null, build_s: s.build ?? null };
}

/** The share of the reference lists' items that each list also holds, over every query (1 with no reference). */
export function agreement(reference: readonly string[][], lists: readonly string[][]): number {
  let shared = 0;
  let total = 0;
  lists.forEach((l, i) => {
    const ref = new Set(reference[i] ?? []);
    total += ref.size;
    shared += l.filter((x) => ref.has(x)).length;
  });
  return total > 0 ? shared / total : 1;
}

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DATA } from './common.js';

export interface WrkResult {
  requests: number;
  rps: number;
  /** Mean latency of completed requests. */
  meanMs: number;
  p50ms: number;
  p90ms: number;
  p99ms: number;
  non2xx: number;
  socketErrors: number;
  /** Answers with status 200 that carry an error (a JSON-RPC error or a tool's isError); runWrkMixed only. */
  appErrors?: number;
}

/**
 * Drives an HTTP endpoint with wrk (Debian's `wrk`): `connections` concurrent
 * clients for `seconds`, each POSTing `body(q)` for a random query from
 * `queries`. Latency percentiles are wrk's own.
 */
export function runWrk(
  url: string,
  path: string,
  queries: string[],
  body: string,
  connections: number,
  seconds: number,
  headers: Record<string, string> = {},
  opts: { raw?: boolean } = {},
): WrkResult {
  const dir = join(BENCH_DATA, 'wrk');
  mkdirSync(dir, { recursive: true });
  const qfile = join(dir, 'queries.txt');
  // raw: each query is already the JSON text to put in the body (a vector's list of numbers)
  writeFileSync(qfile, queries.map((q) => (opts.raw ? q : JSON.stringify(q))).join('\n') + '\n');
  const lua = join(dir, 'post.lua');
  // body is a template with QUERY standing for the JSON-encoded query
  const [pre, post] = body.split('QUERY') as [string, string];
  writeFileSync(
    lua,
    `local qs = {}
for line in io.lines(${JSON.stringify(qfile)}) do qs[#qs + 1] = line end
local pre, post = ${luaString(pre)}, ${luaString(post)}
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
request = function()
  return wrk.format("POST", ${luaString(path)}, {${Object.entries({ 'Content-Type': 'application/json', ...headers })
    .map(([k, v]) => `[${luaString(k)}] = ${luaString(v)}`)
    .join(', ')}}, pre .. qs[math.random(#qs)] .. post)
end
`,
  );
  const r = spawnSync('wrk', wrkArgs(lua, connections, seconds, url), { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`wrk failed: ${r.stderr}`);
  return parseWrk(r.stdout);
}

function wrkArgs(lua: string, connections: number, seconds: number, url: string): string[] {
  return [
    ...['-t', String(Math.min(2, connections)), '-c', String(connections), '-d', `${seconds}s`],
    ...['--timeout', '60s', '--latency', '-s', lua, url],
  ];
}

/** wrk's report, read. */
function parseWrk(out: string): WrkResult {
  const num = (re: RegExp): number => Number(re.exec(out)?.[1] ?? 0);
  const ms = (label: string): number => {
    const m = new RegExp(label === 'mean' ? 'Latency\\s+([\\d.]+)(us|ms|s)' : `${label}%\\s+([\\d.]+)(us|ms|s)`).exec(
      out,
    );
    if (!m) return NaN;
    const v = Number(m[1]);
    return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
  };
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requests: num(/(\d+) requests in/),
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    meanMs: ms('mean'),
    p50ms: ms('50'),
    p90ms: ms('90'),
    p99ms: ms('99'),
    non2xx: num(/Non-2xx or 3xx responses: (\d+)/),
    appErrors: num(/App errors: (\d+)/),
    socketErrors: sock
      ? sock
          .slice(1)
          .map(Number)
          .reduce((a, b) => a + b, 0)
      : 0,
  };
}

export interface WrkKind {
  /** Names the kind's files under bench/data/wrk. */
  name: string;
  path: string;
  /** Whole request bodies, one picked at random for each request (each one line of JSON). */
  bodies: string[];
  headers: Record<string, string>;
  /** When given, each request carries one of these, picked at random (a session id per client, say). */
  headerChoices?: { header: string; values: string[] };
  connections: number;
}

/**
 * Drives several kinds of request at once, one wrk process a kind, for
 * `seconds`; each kind's latency is its own wrk's. Resolves when all are done.
 */
export async function runWrkMixed(url: string, kinds: WrkKind[], seconds: number): Promise<Map<string, WrkResult>> {
  const dir = join(BENCH_DATA, 'wrk');
  mkdirSync(dir, { recursive: true });
  const runs = kinds.map(async (k) => {
    const bodies = join(dir, `${k.name}.bodies`);
    writeFileSync(bodies, k.bodies.join('\n') + '\n');
    const choices = join(dir, `${k.name}.choices`);
    writeFileSync(choices, (k.headerChoices?.values ?? []).join('\n') + '\n');
    const lua = join(dir, `${k.name}.lua`);
    const headers = Object.entries({ 'Content-Type': 'application/json', ...k.headers })
      .map(([h, v]) => `[${luaString(h)}] = ${luaString(v)}`)
      .join(', ');
    writeFileSync(
      lua,
      `local bodies, choices = {}, {}
for line in io.lines(${JSON.stringify(bodies)}) do bodies[#bodies + 1] = line end
for line in io.lines(${JSON.stringify(choices)}) do if #line > 0 then choices[#choices + 1] = line end end
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
request = function()
  local h = {${headers}}
  if #choices > 0 then h[${luaString(k.headerChoices?.header ?? '')}] = choices[math.random(#choices)] end
  return wrk.format("POST", ${luaString(k.path)}, h, bodies[math.random(#bodies)])
end
local threads = {}
function setup(thread) threads[#threads + 1] = thread end
errs = 0
function response(status, headers, body)
  if status == 200 and (body:find('"isError":true', 1, true) or body:find('"error":{', 1, true)) then errs = errs + 1 end
end
function done(summary, latency, requests)
  local n = 0
  for _, t in ipairs(threads) do n = n + t:get("errs") end
  io.write(string.format("App errors: %d\\n", n))
end
`,
    );
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn('wrk', wrkArgs(lua, k.connections, seconds, url), { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('exit', (code) =>
        code === 0 ? resolve(stdout) : reject(new Error(`wrk (${k.name}) failed: ${stderr}`)),
      );
    });
    return [k.name, parseWrk(out)] as const;
  });
  return new Map(await Promise.all(runs));
}

function luaString(s: string): string {
  return JSON.stringify(s);
}

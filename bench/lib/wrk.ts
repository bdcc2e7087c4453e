import { spawnSync } from 'node:child_process';
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
): WrkResult {
  const dir = join(BENCH_DATA, 'wrk');
  mkdirSync(dir, { recursive: true });
  const qfile = join(dir, 'queries.txt');
  writeFileSync(qfile, queries.map((q) => JSON.stringify(q)).join('\n') + '\n');
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
  const r = spawnSync(
    'wrk',
    [
      '-t',
      String(Math.min(2, connections)),
      '-c',
      String(connections),
      '-d',
      `${seconds}s`,
      '--timeout',
      '60s',
      '--latency',
      '-s',
      lua,
      url,
    ],
    {
      encoding: 'utf8',
    },
  );
  if (r.status !== 0) throw new Error(`wrk failed: ${r.stderr}`);
  const out = r.stdout;
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
    socketErrors: sock
      ? sock
          .slice(1)
          .map(Number)
          .reduce((a, b) => a + b, 0)
      : 0,
  };
}

function luaString(s: string): string {
  return JSON.stringify(s);
}

import { spawn, type ChildProcess } from 'node:child_process';
import { BIN } from './paths.js';

export interface RunningServer {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop: () => Promise<number | null>;
}

/** Spawns `retriever-mcp --transport http --port 0` and waits until /ready answers 200 (unless `waitForReady` is false). */
export async function startHttpServer(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  opts: { waitForReady?: boolean } = {},
): Promise<RunningServer> {
  const child = spawn(process.execPath, [BIN.server, '--transport', 'http', '--port', '0', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 30_000);
    child.stderr?.on('data', () => {
      const m = /listening on (http:\/\/[^\s]+)/.exec(err);
      if (m) {
        clearTimeout(t);
        resolve(m[1] as string);
      }
    });
    void exited.then((code) => reject(new Error(`server exited (${code}): ${err}`)));
  });
  const token = env['RETRIEVER_MCP_TOKEN'];
  for (let i = 0; i < (opts.waitForReady === false ? 0 : 300); i++) {
    const r = await fetch(`${url}/ready`, token ? { headers: { authorization: `Bearer ${token}` } } : {}).catch(
      () => undefined,
    );
    if (r?.status === 200) break;
    await new Promise((res) => setTimeout(res, 100));
  }
  return {
    url,
    child,
    stderr: () => err,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await r.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: r.status, headers: r.headers, json: json as Record<string, unknown> & unknown[], text };
}

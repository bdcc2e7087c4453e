import { fork, spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runBinAsync } from '../helpers/mcp.js';
import { BIN, REPO_ROOT } from '../helpers/paths.js';

// bin/load-cli.js fixMmapThreshold: where Node can exec in place (22.15+ on Linux), every command
// runs with glibc's mmap threshold fixed, which returns a model's parse memory to the system
const CAN_EXEC = process.platform === 'linux' && typeof (process as { execve?: unknown }).execve === 'function';
const PROBE = join(REPO_ROOT, 'test', 'fixtures', 'mmap-threshold-probe.mjs');

function probe(env: NodeJS.ProcessEnv): Promise<{
  childPid: number | undefined;
  out: { pid: number; threshold: string | null; execArgv: string[]; argv: string[] };
}> {
  return new Promise((resolve, reject) => {
    const base = { ...process.env };
    delete base['MALLOC_MMAP_THRESHOLD_'];
    const child = spawn(process.execPath, ['--max-old-space-size=300', PROBE, 'a', '--b'], {
      env: { ...base, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.on('error', reject);
    child.on('close', () => {
      try {
        resolve({ childPid: child.pid, out: JSON.parse(text) as never });
      } catch (err) {
        reject(new Error(`probe printed ${JSON.stringify(text)}: ${String(err)}`));
      }
    });
  });
}

it('a command starts again in its own place with the threshold fixed, flags and arguments kept', async () => {
  const { childPid, out } = await probe({});
  expect(out.argv).toEqual(['a', '--b']);
  expect(out.execArgv).toContain('--max-old-space-size=300');
  if (CAN_EXEC) {
    expect(out.threshold).toBe('131072');
    expect(out.pid).toBe(childPid); // the same process, not a child holding a second runtime
  } else {
    expect(out.threshold).toBeNull();
  }
}, 30_000);

it('a threshold the user chose is kept', async () => {
  const { out } = await probe({ MALLOC_MMAP_THRESHOLD_: '262144' });
  expect(out.threshold).toBe('262144');
}, 30_000);

it('the real command runs with it', async () => {
  const r = await runBinAsync(BIN.server, ['--help'], { MALLOC_MMAP_THRESHOLD_: undefined, NODE_OPTIONS: '' });
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/retriever-mcp/);
}, 30_000);

it('no second start where a preload would run twice (Reliability V)', async () => {
  // a preload runs in each image of the process: it must see one, without the threshold
  const say = `process.stderr.write("threshold="+process.env.MALLOC_MMAP_THRESHOLD_+"\\n")`;
  const env: NodeJS.ProcessEnv = { NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(say)}` };
  const r = await runBinAsync(BIN.server, ['--help'], { ...env, MALLOC_MMAP_THRESHOLD_: undefined });
  expect(r.status).toBe(0);
  const seen = [...r.stderr.matchAll(/threshold=(\w+)/g)].map((m) => m[1]);
  expect(seen).toEqual(['undefined']);
}, 30_000);

it("no second start under a parent's IPC channel: child_process.fork keeps its child (Reliability V)", async () => {
  const base = { ...process.env };
  delete base['MALLOC_MMAP_THRESHOLD_'];
  const child = fork(PROBE, ['ipc'], { env: base, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  let text = '';
  child.stdout?.on('data', (d: Buffer) => (text += d.toString()));
  const disconnected = new Promise<string>((r) => child.once('disconnect', () => r('disconnected')));
  const answered = new Promise<string>((r) => child.once('message', (m) => r(String((m as { pong?: string }).pong))));
  child.send({ ping: 'hello' });
  expect(await Promise.race([answered, disconnected])).toBe('hello');
  child.kill();
  const out = JSON.parse(text.split('\n')[0] as string) as { pid: number; threshold: string | null };
  expect(out.pid).toBe(child.pid);
  expect(out.threshold).toBeNull();
}, 30_000);

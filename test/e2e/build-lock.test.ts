import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockBuild } from '../../src/build/build-lock.js';
import { writeJsonl } from '../helpers/build.js';
import { startHttpServer } from '../helpers/http-server.js';
import { makeLongPassages } from '../helpers/long-passages.js';
import { runBin, runBinAsync } from '../helpers/mcp.js';
import { BIN, makeTempDir } from '../helpers/paths.js';

// Two builds of one name used to share `.NAME.partial`: one failed with ENOENT, the other published
// files the first had half-written, and a good index was replaced by one failing its own checksum.
const tmp = makeTempDir();
let input: string;

beforeAll(() => {
  // large enough that a build runs for a few seconds on one thread
  input = writeJsonl(tmp.dir, 'big.jsonl', makeLongPassages(12_000, 300));
});
afterAll(tmp.cleanup);

const buildArgs = (indexDir: string) => [
  ...['--name', 'c', '--input', input, '--format', 'wiki18', '--index-dir', indexDir],
  ...['--no-dense', '--threads', '0', '--no-progress'],
];

async function waitForFile(path: string, ms = 30_000): Promise<void> {
  const t0 = Date.now();
  while (!existsSync(path)) {
    if (Date.now() - t0 > ms) throw new Error(`${path} never appeared`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('one build of a name at a time', () => {
  it('refuses a second build at once, naming the running one, and serves the first one intact', async () => {
    const indexDir = join(tmp.dir, 'race');
    // a good index first: the race must never replace it with a damaged one
    expect(runBin(BIN.build, buildArgs(indexDir)).status).toBe(0);
    const first = runBinAsync(BIN.build, buildArgs(indexDir));
    await waitForFile(join(indexDir, '.c.lock'));
    const holder = JSON.parse(readFileSync(join(indexDir, '.c.lock'), 'utf8')) as { pid: number };
    const second = runBin(BIN.build, buildArgs(indexDir));
    expect(second.status).not.toBe(0);
    expect(second.stderr).toMatch(new RegExp(`another build of c is running \\(pid ${holder.pid}`));
    const done = await first;
    expect(done.status, done.stderr).toBe(0);
    expect(existsSync(join(indexDir, '.c.lock'))).toBe(false);
    const srv = await startHttpServer(['--corpus', 'c', '--index-dir', indexDir, '--verify', 'full']);
    try {
      const r = await fetch(`${srv.url}/ready`);
      expect(r.status).toBe(200);
    } finally {
      await srv.stop();
    }
  }, 120_000);

  it('takes over a lock whose process is gone, and refuses one held by a live process', () => {
    const indexDir = join(tmp.dir, 'locks');
    const a = lockBuild(indexDir, 'x');
    expect(() => lockBuild(indexDir, 'x')).toThrow(/another build of x is running \(pid \d+/);
    a.release();
    // a lock left by a build killed with -9: its PID no longer runs (above Linux's pid_max of 2^22)
    writeFileSync(join(indexDir, '.x.lock'), JSON.stringify({ pid: 2 ** 22 + 7, host: hostname(), started: 'then' }));
    const b = lockBuild(indexDir, 'x');
    expect(JSON.parse(readFileSync(b.path, 'utf8')).pid).toBe(process.pid);
    b.release();
    expect(existsSync(b.path)).toBe(false);
  });

  it('says how to resume when a build is stopped by a signal', async () => {
    const indexDir = join(tmp.dir, 'signal');
    const child = spawn(process.execPath, [BIN.build, ...buildArgs(indexDir)]);
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    await waitForFile(join(indexDir, '.c.lock'));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(err).toMatch(/interrupted by SIGINT; nothing was published/);
    expect(err).toMatch(/Resume with: retriever-mcp build --name c .* --resume/);
  }, 60_000);
});

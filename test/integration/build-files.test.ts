import { spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lockBuild } from '../../src/build/build-lock.js';
import { openCorpus } from '../../src/search/open-corpus.js';
import { silentLogger } from '../../src/util/log.js';
import { bootId, processStartTicks } from '../../src/util/process-identity.js';
import { bm25BuildArgs, build, writeJsonl } from '../helpers/build.js';
import { runBin } from '../helpers/mcp.js';
import { BIN, makeTempDir } from '../helpers/paths.js';

// Reliability III, items 2, 5, 6 and 25: a build removes and writes only what it made itself.
const tmp = makeTempDir();
afterAll(tmp.cleanup);

const docs = (word: string) => [
  { id: '1', contents: `"A"\n${word} alpha` },
  { id: '2', contents: `"B"\n${word} beta` },
];

function hits(indexDir: string, q: string): string[] {
  const c = openCorpus(indexDir, 'c');
  try {
    return c.bm25.search(q, 5).map((h) => c.store.getChunkId(h.num) as string);
  } finally {
    c.close();
  }
}

describe('a rebuild removes only what a build made', () => {
  it('leaves a hand-made symlink’s target, and everything beside it, in place', async () => {
    const indexDir = join(tmp.dir, 'moved');
    const bigDisk = join(tmp.dir, 'big-disk');
    const input = writeJsonl(tmp.dir, 'v1.jsonl', docs('river'));
    await build({ name: 'c', input, format: 'wiki18', indexDir });
    // the index moved by hand to another disk, other files beside it there, and linked back
    mkdirSync(bigDisk);
    renameSync(realpathSync(join(indexDir, 'c')), join(bigDisk, 'c-index'));
    writeFileSync(join(bigDisk, 'c-index', 'my-notes.txt'), 'keep me');
    writeFileSync(join(bigDisk, 'other.txt'), 'keep me too');
    const { rmSync } = await import('node:fs');
    rmSync(join(indexDir, 'c'));
    symlinkSync(join(bigDisk, 'c-index'), join(indexDir, 'c'));

    const warnings: string[] = [];
    const v2 = writeJsonl(tmp.dir, 'v2.jsonl', docs('lake'));
    await build({
      name: 'c',
      input: v2,
      format: 'wiki18',
      indexDir,
      log: { ...silentLogger, warn: (m) => warnings.push(m) },
    });
    expect(hits(indexDir, 'lake')).toHaveLength(2);
    expect(readFileSync(join(bigDisk, 'c-index', 'my-notes.txt'), 'utf8')).toBe('keep me');
    expect(readFileSync(join(bigDisk, 'other.txt'), 'utf8')).toBe('keep me too');
    expect(existsSync(join(bigDisk, 'c-index', 'manifest.json'))).toBe(true);
    expect(warnings.join('\n')).toMatch(/left in place: .*c-index/);
  });

  it('keeps a plain directory it replaces, moved aside and named', async () => {
    const indexDir = join(tmp.dir, 'plain');
    const input = writeJsonl(tmp.dir, 'p1.jsonl', docs('river'));
    await build({ name: 'c', input, format: 'wiki18', indexDir });
    const real = realpathSync(join(indexDir, 'c'));
    const { rmSync, cpSync } = await import('node:fs');
    rmSync(join(indexDir, 'c'));
    cpSync(real, join(indexDir, 'c'), { recursive: true });
    writeFileSync(join(indexDir, 'c', 'mine.txt'), 'x');
    const warnings: string[] = [];
    await build({
      name: 'c',
      input,
      format: 'wiki18',
      indexDir,
      log: { ...silentLogger, warn: (m) => warnings.push(m) },
    });
    const kept = readdirSync(indexDir).find((e) => e.startsWith('.c.replaced-'));
    expect(kept).toBeDefined();
    expect(readFileSync(join(indexDir, kept as string, 'mine.txt'), 'utf8')).toBe('x');
    expect(warnings.join('\n')).toContain(kept);
  });

  it('still removes its own previous build', async () => {
    const indexDir = join(tmp.dir, 'own');
    const input = writeJsonl(tmp.dir, 'o1.jsonl', docs('river'));
    const first = await build({ name: 'c', input, format: 'wiki18', indexDir });
    await build({ name: 'c', input, format: 'wiki18', indexDir });
    expect(existsSync(join(indexDir, `.c.${first.manifest.build_id}`))).toBe(false);
    expect(readdirSync(indexDir).filter((e) => e.startsWith('.c.'))).toHaveLength(1);
  });
});

describe('writes into a shared --index-dir never follow a planted symlink', () => {
  it('the lock’s record file: the victim file is untouched and the build takes the lock', () => {
    const indexDir = join(tmp.dir, 'shared-lock');
    mkdirSync(indexDir);
    const victim = join(tmp.dir, 'victim.txt');
    writeFileSync(victim, 'precious');
    // the attacker cannot know the PID, so plants links for a range of them; this process's is among them
    symlinkSync(victim, join(indexDir, `.c.lock.${process.pid}`));
    const lock = lockBuild(indexDir, 'c');
    lock.release();
    expect(readFileSync(victim, 'utf8')).toBe('precious');
  });

  it('the partial directory: a planted symlink is removed, never written through', async () => {
    const indexDir = join(tmp.dir, 'shared-partial');
    const elsewhere = join(tmp.dir, 'attacker-dir');
    mkdirSync(indexDir);
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(indexDir, '.c.partial'));
    const input = writeJsonl(tmp.dir, 's1.jsonl', docs('river'));
    await build({ name: 'c', input, format: 'wiki18', indexDir });
    expect(readdirSync(elsewhere)).toEqual([]);
    // and --resume through one is refused
    symlinkSync(elsewhere, join(indexDir, '.c.partial'));
    await expect(build({ name: 'c', input, format: 'wiki18', indexDir, resume: true })).rejects.toThrow(
      /not a directory this user's build made/,
    );
    expect(readdirSync(elsewhere)).toEqual([]);
  });
});

describe('a stale lock whose PID is alive again', () => {
  const record = (pid: number, start: string | undefined) =>
    `${JSON.stringify({ pid, host: hostname(), started: '2026-01-01T00:00:00Z', boot: bootId(), start })}\n`;

  it('a lock recording this very PID (PID 1 after a container restart) is taken over', () => {
    const indexDir = join(tmp.dir, 'pid-self');
    mkdirSync(indexDir);
    writeFileSync(join(indexDir, '.c.lock'), record(process.pid, '1'));
    const lock = lockBuild(indexDir, 'c');
    expect(JSON.parse(readFileSync(lock.path, 'utf8')).start).toBe(processStartTicks(process.pid));
    lock.release();
    expect(existsSync(lock.path)).toBe(false);
  });

  it.skipIf(bootId() === undefined)('a live PID that started after the lock was written is not its holder', () => {
    const indexDir = join(tmp.dir, 'pid-reused');
    mkdirSync(indexDir);
    // PID 1 runs, but not since the recorded start: the lock's holder is gone
    writeFileSync(join(indexDir, '.c.lock'), record(1, 'not-its-start-time'));
    const buildNamed = (file: string, word: string) =>
      runBin(BIN.build, bm25BuildArgs('c', writeJsonl(tmp.dir, file, docs(word)), indexDir));
    const r = buildNamed('r.jsonl', 'x');
    expect(r.status, r.stderr).toBe(0);
    // while one recording PID 1's real start time is held
    writeFileSync(join(indexDir, '.c.lock'), record(1, processStartTicks(1)));
    const held = buildNamed('r2.jsonl', 'y');
    expect(held.status).toBe(1);
    expect(held.stderr).toMatch(/another build of c is running \(pid 1 /);
  });
});

describe.skipIf(spawnSync('unshare', ['-rm', 'true']).status !== 0)('a build that fills the disk', () => {
  it('removes its partial directory and says the disk is full', () => {
    const dir = join(tmp.dir, 'full');
    mkdirSync(dir);
    const input = writeJsonl(
      tmp.dir,
      'big.jsonl',
      Array.from({ length: 20_000 }, (_, i) => ({ id: String(i), contents: `"T${i}"\n${'word '.repeat(40)}${i}` })),
    );
    // a 1 MiB tmpfs in a mount namespace of its own (no root needed where user namespaces are allowed)
    const script = `mount -t tmpfs -o size=1m tmpfs "$0" && "${process.execPath}" "${BIN.build}" --name c --input "${input}" --format wiki18 --index-dir "$0/idx" --no-dense --no-progress; rc=$?; ls -A "$0/idx"; exit $rc`;
    const r = spawnSync('unshare', ['-rm', 'sh', '-c', script, dir], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/disk holding .* is full .*partial build was removed/);
    expect(r.stdout).not.toMatch(/\.c\.partial/);
    expect(lstatSync(dir).isDirectory()).toBe(true);
  });
});

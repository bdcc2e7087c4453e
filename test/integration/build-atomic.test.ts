import { spawn } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { DensePhase } from '../../src/build/build-index.js';
import { RetrieverError } from '../../src/errors.js';
import { openCorpus } from '../../src/search/open-corpus.js';
import { silentLogger } from '../../src/util/log.js';
import { build, writeJsonl } from '../helpers/build.js';
import { runBin } from '../helpers/mcp.js';
import { BIN, makeTempDir } from '../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

function searchIds(indexDir: string, name: string, q: string): string[] {
  const c = openCorpus(indexDir, name);
  try {
    return c.bm25.search(q, 5).map((h) => c.store.getChunkId(h.num) as string);
  } finally {
    c.close();
  }
}

/** A logger that runs `on` for each info line, as a user's Ctrl-C would at that moment. */
function loggerCalling(on: (line: string) => void) {
  return { ...silentLogger, info: (m: string) => on(m) };
}

describe('atomic builds', () => {
  it('a stop while the files are checksummed publishes nothing (before: published, said built, exit 143)', async () => {
    const indexDir = join(tmp.dir, 'stop-checksum');
    const input = writeJsonl(tmp.dir, 'sc.jsonl', [{ id: '1', contents: '"A"\nalpha beta' }]);
    const stop = new AbortController();
    const log = loggerCalling((m) => {
      if (m.startsWith('checksumming')) stop.abort(new RetrieverError('STOPPED', 'SIGTERM'));
    });
    await expect(build({ name: 'c', input, format: 'wiki18', indexDir, log, signal: stop.signal })).rejects.toThrow(
      /SIGTERM/,
    );
    expect(existsSync(join(indexDir, 'c'))).toBe(false);
    expect(existsSync(join(indexDir, '.c.partial'))).toBe(true); // kept for --resume
  });

  it('a build that fails after a finished phase says where its partial build is kept, and how to go on', async () => {
    const indexDir = join(tmp.dir, 'fail-dense');
    const input = writeJsonl(tmp.dir, 'fd.jsonl', [{ id: '1', contents: '"A"\nalpha beta' }]);
    const dense: DensePhase = {
      counter: { id: 'words', words: () => [], count: (t) => t.split(' ').length },
      fingerprint: 'failing',
      run: async () => {
        throw new RetrieverError('MODEL', 'the encoder failed');
      },
    };
    const err = (await build({ name: 'c', input, format: 'wiki18', indexDir, dense }).catch(
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toMatch(
      /the encoder failed; the partial build is kept in .*\.c\.partial: `.* --resume` continues it/,
    );
    expect(existsSync(join(indexDir, '.c.partial'))).toBe(true);
  });

  it('a build that fails before any phase finished leaves no partial directory behind', async () => {
    const indexDir = join(tmp.dir, 'fail-early');
    const bad = join(tmp.dir, 'binary.jsonl');
    writeFileSync(bad, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00, 0x1b, 0x5b, 0x32, 0x4a, 0x0a]));
    const err = (await build({ name: 'c', input: bad, format: 'jsonl', indexDir }).catch((e: unknown) => e)) as Error;
    // a binary file is named as one, and none of its bytes reach the terminal (ESC [2J clears it)
    expect(err.message).toMatch(/binary file, not JSON lines/);
    expect(err.message).not.toMatch(/[\u0000-\u0008\u000e-\u001f\u007f]/);
    expect(existsSync(join(indexDir, '.c.partial'))).toBe(false);
  });

  it('publishes through a symlink swap and removes the previous build', async () => {
    const indexDir = join(tmp.dir, 'swap');
    const v1 = writeJsonl(tmp.dir, 'v1.jsonl', [{ id: '1', contents: '"A"\nalpha beta' }]);
    const v2 = writeJsonl(tmp.dir, 'v2.jsonl', [{ id: '2', contents: '"B"\nalpha gamma' }]);
    const first = await build({ name: 'c', input: v1, format: 'wiki18', indexDir });
    expect(lstatSync(join(indexDir, 'c')).isSymbolicLink()).toBe(true);
    expect(searchIds(indexDir, 'c', 'alpha')).toEqual(['1']);
    await build({ name: 'c', input: v2, format: 'wiki18', indexDir });
    expect(searchIds(indexDir, 'c', 'alpha')).toEqual(['2']);
    const hidden = readdirSync(indexDir).filter((e) => e.startsWith('.c.'));
    expect(hidden).toHaveLength(1); // only the live build remains
    expect(existsSync(join(indexDir, `.c.${first.manifest.build_id}`))).toBe(false);
  });

  it('a build that fails on bad input leaves the previous index serving identically', async () => {
    const indexDir = join(tmp.dir, 'fail');
    const good = writeJsonl(tmp.dir, 'good.jsonl', [
      { id: '1', contents: '"A"\nriver bank' },
      { id: '2', contents: '"B"\nriver fish' },
    ]);
    await build({ name: 'c', input: good, format: 'wiki18', indexDir });
    const before = searchIds(indexDir, 'c', 'river fish');
    const bad = join(tmp.dir, 'bad.jsonl');
    writeFileSync(bad, `${JSON.stringify({ id: '1', contents: 'x' })}\n{broken json\n`);
    await expect(build({ name: 'c', input: bad, format: 'wiki18', indexDir })).rejects.toThrow(
      /line 2: not valid JSON/,
    );
    expect(searchIds(indexDir, 'c', 'river fish')).toEqual(before);
  });

  it('warns when the postings budget is more than a BM25 thread holds, and builds the same index', async () => {
    const input = writeJsonl(tmp.dir, 'budget.jsonl', [
      { id: 'a', contents: 'alpha beta' },
      { id: 'b', contents: 'beta gamma' },
    ]);
    const warnings: string[] = [];
    const log = { ...silentLogger, warn: (m: string) => warnings.push(m) };
    await build({
      name: 'big',
      input,
      format: 'wiki18',
      indexDir: join(tmp.dir, 'budget'),
      maxPostingsInMemory: 2 ** 31,
      log,
    });
    await build({ name: 'small', input, format: 'wiki18', indexDir: join(tmp.dir, 'budget'), log });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/--max-postings-in-memory 2147483648 .*at most 160\.00M/);
    expect(searchIds(join(tmp.dir, 'budget'), 'big', 'beta')).toEqual(
      searchIds(join(tmp.dir, 'budget'), 'small', 'beta'),
    );
    expect(searchIds(join(tmp.dir, 'budget'), 'big', 'beta')).toHaveLength(2);
  });

  it('rejects duplicate ids with a message naming the id', async () => {
    const indexDir = join(tmp.dir, 'dup');
    const dup = writeJsonl(tmp.dir, 'dup.jsonl', [
      { id: '7', contents: 'one' },
      { id: '7', contents: 'two' },
    ]);
    await expect(build({ name: 'c', input: dup, format: 'wiki18', indexDir })).rejects.toThrow(
      /duplicate document id "7"/,
    );
  });

  it('an interrupted (SIGKILLed) build leaves the previous index intact', async () => {
    const indexDir = join(tmp.dir, 'kill');
    const small = writeJsonl(tmp.dir, 'small.jsonl', [{ id: '1', contents: '"A"\nkeep me' }]);
    await build({ name: 'c', input: small, format: 'wiki18', indexDir });
    const big = writeJsonl(
      tmp.dir,
      'big.jsonl',
      Array.from({ length: 150_000 }, (_, i) => ({
        id: String(i),
        contents: `"T${i}"\nkeep words ${i} more text here`,
      })),
    );
    const child = spawn(
      process.execPath,
      [BIN.build, '--name', 'c', '--input', big, '--format', 'wiki18', '--index-dir', indexDir, '--no-dense'],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    // kill once ingestion has reported (non-TTY progress prints its final line
    // when ingest ends); BM25 indexing of 150k chunks is still ahead then
    await new Promise<void>((resolve) => {
      child.stderr.on('data', (d: Buffer) => {
        if (d.toString().includes('ingest')) resolve();
      });
      setTimeout(resolve, 3000);
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    expect(searchIds(indexDir, 'c', 'keep')).toEqual(['1']);
    expect(existsSync(join(indexDir, '.c.partial'))).toBe(true);
  });
});

describe('build-index CLI', () => {
  it('writes progress and a one-line summary to stderr and nothing to stdout', () => {
    const input = writeJsonl(tmp.dir, 'cli.jsonl', [{ id: '1', title: 'T', text: 'Hello world. Second sentence.' }]);
    const r = runBin(BIN.build, [
      '--name',
      'cli',
      '--input',
      input,
      '--format',
      'jsonl',
      '--index-dir',
      join(tmp.dir, 'cli'),
      '--no-dense',
    ]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/ingest cli/);
    expect(r.stderr).toMatch(
      /built cli: 1 documents, 1 chunks, \d+ tokens; in [\d.]+s; index .* \(store .*, bm25 .*\); at /,
    );
  });

  it('fails with exit 2 and one line on missing flags or an unreadable input', () => {
    const r = runBin(BIN.build, ['--name', 'x', '--format', 'jsonl']);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /needs --corpus PRESET, or --name and --input \(a folder of documents, or a corpus file with its --format\)/,
    );
    const m = runBin(BIN.build, [
      '--name',
      'x',
      '--input',
      '/nonexistent.jsonl',
      '--format',
      'jsonl',
      '--index-dir',
      join(tmp.dir, 'm'),
    ]);
    // the input is checked before any model download is attempted
    expect(m.status).toBe(2);
    expect(m.stderr).toMatch(/cannot read input \/nonexistent.jsonl/);
  });
});

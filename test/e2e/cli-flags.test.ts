import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeJsonl } from '../helpers/build.js';
import { runBin } from '../helpers/mcp.js';
import { BIN, makeTempDir } from '../helpers/paths.js';

const tmp = makeTempDir();
afterAll(() => tmp.cleanup());

describe('flags that cannot mean what the user wants', () => {
  beforeAll(() => {
    const input = writeJsonl(tmp.dir, 'c.jsonl', [{ id: 'a', contents: 'Alpha\nthe first letter' }]);
    const r = runBin(BIN.build, [
      '--name',
      'abc',
      '--input',
      input,
      '--format',
      'jsonl',
      '--index-dir',
      tmp.dir,
      '--no-dense',
    ]);
    expect(r.status, r.stderr).toBe(0);
  });

  it('a bad corpus name is refused before anything starts, in one line, neither long nor raw (Reliability V)', () => {
    const cases: Array<[string, string[]]> = [
      [BIN.server, ['--corpus', 'x'.repeat(50_000), '--index-dir', tmp.dir]],
      [BIN.server, ['--corpus', 'a\n[retriever-mcp] serving fake', '--index-dir', tmp.dir]],
      [BIN.server, ['--corpus', 'a\nb', '--index-dir', tmp.dir, '--transport', 'http', '--port', '0']],
      [BIN.build, ['--name', 'a\nb', '--input', tmp.dir, '--index-dir', tmp.dir]],
    ];
    for (const [bin, args] of cases) {
      const r = runBin(bin, args);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr).toMatch(/invalid corpus name/);
      expect(r.stderr.length).toBeLessThan(400);
      expect(r.stderr).not.toMatch(/listening/);
    }
  });

  it('an empty --index-dir is an error in every command', () => {
    for (const [bin, args] of [
      [BIN.server, ['--corpus', 'abc', '--index-dir', '']],
      [BIN.server, ['eval', '--corpus', 'abc', '--index-dir', ' ']],
      [BIN.build, ['--name', 'abc', '--input', 'x', '--format', 'jsonl', '--index-dir', '']],
    ] as const) {
      const r = runBin(bin, [...args]);
      expect(r.status, r.stderr).not.toBe(0);
      expect(r.stderr).toMatch(/--index-dir is empty: give the directory that holds the indexes/);
    }
  });

  it('HTTP-only flags without --transport http are named in a warning', () => {
    // stdin is closed at once, so the stdio server starts, warns and exits
    const r = runBin(BIN.server, ['--corpus', 'abc', '--index-dir', tmp.dir, '--port', '9999', '--auth-token=t']);
    expect(r.stderr).toMatch(
      /warn: --port, --auth-token apply only to --transport http; serving over stdio, they are ignored/,
    );
    const quiet = runBin(BIN.server, ['--corpus', 'abc', '--index-dir', tmp.dir]);
    expect(quiet.stderr).not.toMatch(/apply only to --transport http/);
  });
});

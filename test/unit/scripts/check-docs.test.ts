import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir, REPO_ROOT } from '../../helpers/paths.js';

// `npm run check` runs scripts/check-docs.mjs: the front documents' sizes, dead links, and links
// from README and the guide to files the npm package leaves out. Each case is a small git
// repository of its own.
const SCRIPT = join(REPO_ROOT, 'scripts', 'check-docs.mjs');
let tmp: ReturnType<typeof makeTempDir> | undefined;
afterEach(() => tmp?.cleanup());

function repo(files: Record<string, string>, packed: string[]): string {
  tmp = makeTempDir('rmcp-docs-');
  const root = tmp.dir;
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(root, name, '..'), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'x', version: '1.0.0', files: packed }));
  for (const args of [
    ['init', '-q'],
    ['add', '.'],
  ])
    spawnSync('git', args, { cwd: root });
  return root;
}

function check(root: string): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [SCRIPT, '--root', root], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stderr: r.stderr };
}

describe('scripts/check-docs.mjs', () => {
  it('passes documents within their sizes whose links resolve in the package', () => {
    const root = repo(
      { 'README.md': 'See [the guide](docs/guide.md#x-y).\n', 'docs/guide.md': '# Guide\n\n## X’ `y`\n' },
      ['README.md', 'docs'],
    );
    const r = check(root);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('fails a README over 12 kB, a DESIGN over 25 kB and a CHANGELOG over 12 kB, naming each', () => {
    const root = repo(
      {
        'README.md': 'x'.repeat(12_001),
        'DESIGN.md': 'x'.repeat(25_001),
        'CHANGELOG.md': 'x'.repeat(12_000),
        'BENCHMARKS.md': 'x'.repeat(30_001),
      },
      ['README.md'],
    );
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/README\.md is 12\.0 kB, over its 12 kB limit/);
    expect(r.stderr).toMatch(/DESIGN\.md is 25\.0 kB, over its 25 kB limit/);
    expect(r.stderr).toMatch(/BENCHMARKS\.md is 30\.0 kB, over its 30 kB limit/);
    // exactly at the limit is within it
    expect(r.stderr).not.toMatch(/CHANGELOG/);
  });

  it('fails a dead link anywhere, and a README link to a file the package leaves out', () => {
    const root = repo(
      {
        'README.md': '[notes](docs/notes.md) and [code](https://example.com/x) `[not](a-link.md)`\n',
        'docs/notes.md': '[gone](../missing.md) and [nowhere](guide.md#no-such-heading)\n',
        'docs/guide.md': '```\n[in a code block](nowhere.md)\n```\n',
      },
      ['README.md', 'docs/guide.md'],
    );
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/docs\/notes\.md links to \.\.\/missing\.md, which does not exist/);
    expect(r.stderr).toMatch(
      /docs\/notes\.md links to guide\.md#no-such-heading, but docs\/guide\.md has no heading with that anchor/,
    );
    expect(r.stderr).toMatch(/README\.md links to docs\/notes\.md, which the npm package does not carry/);
    expect(r.stderr).not.toMatch(/nowhere|example\.com|a-link/);
  });
});

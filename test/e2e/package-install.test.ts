/**
 * The package as a user installs it outside the clone: `npm pack`, then
 * `npm install -g` of the tarball into a temporary prefix, then the installed
 * commands run from a folder that is not the repository.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeJsonl } from '../helpers/build.js';
import { makeTempDir, REPO_ROOT } from '../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);
const prefix = join(tmp.dir, 'prefix');
const bin = (name: string): string => join(prefix, 'bin', name);

describe('npm pack, npm install -g, and the commands from another folder', () => {
  beforeAll(() => {
    // dist/ is already built by `npm test`; the tarball carries it
    execFileSync('npm', ['pack', '--pack-destination', tmp.dir, '--ignore-scripts'], {
      cwd: REPO_ROOT,
      stdio: 'ignore',
    });
    const tgz = readdirSync(tmp.dir).find((f) => f.endsWith('.tgz'));
    expect(tgz).toBeDefined();
    execFileSync(
      'npm',
      [
        'install',
        '-g',
        '--prefix',
        prefix,
        join(tmp.dir, tgz as string),
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
      ],
      { cwd: tmp.dir, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' } },
    );
  }, 600_000);

  it('builds with `retriever-mcp build` and `build-index`, and serves over stdio', async () => {
    const input = writeJsonl(tmp.dir, 'c.jsonl', [
      { id: 'a', title: 'Tokyo', text: 'Tokyo is the capital of Japan.' },
      { id: 'b', title: 'Paris', text: 'Paris is the capital of France.' },
    ]);
    const idx = join(tmp.dir, 'indexes');
    for (const [cmd, name, extra] of [
      [bin('retriever-mcp'), 'one', ['build']],
      [bin('build-index'), 'two', []],
    ] as const) {
      const r = spawnSync(
        cmd,
        [
          ...extra,
          '--name',
          name,
          '--input',
          input,
          '--format',
          'jsonl',
          '--index-dir',
          idx,
          '--no-dense',
          '--no-progress',
        ],
        { cwd: tmp.dir, encoding: 'utf8' },
      );
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(new RegExp(`built ${name}: 2 documents`));
    }
    const transport = new StdioClientTransport({
      command: bin('retriever-mcp'),
      args: ['--corpus', 'one', '--index-dir', idx],
      cwd: tmp.dir,
      stderr: 'ignore',
    });
    const client = new Client({ name: 'package-test', version: '0.0.0' });
    await client.connect(transport);
    try {
      const r = (await client.callTool({ name: 'search', arguments: { query: 'capital of Japan', top_k: 1 } })) as {
        content: Array<{ text: string }>;
      };
      expect(r.content[0]?.text).toBe('Doc 1 [id a#0] (Title: Tokyo) Tokyo is the capital of Japan.');
    } finally {
      await client.close();
    }
  }, 120_000);
});

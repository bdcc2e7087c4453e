import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, writeJsonl } from '../helpers/build.js';
import { startHttpServer, type RunningServer } from '../helpers/http-server.js';
import { modernNode, npmClient } from '../helpers/modern-node.js';
import { makeTempDir, REPO_ROOT } from '../helpers/paths.js';

/**
 * The official MCP conformance suite (npm `@modelcontextprotocol/conformance`)
 * against our HTTP server, run as each protocol revision requires
 * (`--requirements`): 2025-11-25 (initialize, sessions) and 2026-07-28
 * (stateless, server/discover, caching hints, header validation). Scenarios
 * that need the suite's own fixtures (its test_* tools, prompts, sampling,
 * elicitation) are listed with a reason in test/conformance/baseline-*.yml;
 * every other required check must pass, and a baselined one that starts
 * passing fails the run. 0.2.0-alpha.12 is the first release with the
 * 2026-07-28 scenarios and requirement sets (0.1.16 has neither). It needs
 * Node ≥ 22: Node 24 comes from PyPI when this process is older.
 */
const PACKAGE = '@modelcontextprotocol/conformance@0.2.0-alpha.12';

const tmp = makeTempDir();
let srv: RunningServer;
let node: string;
let cli: string;

beforeAll(async () => {
  node = modernNode(22);
  cli = npmClient(PACKAGE, 'conformance', ['@modelcontextprotocol', 'conformance', 'dist', 'index.js']);
  const indexDir = join(tmp.dir, 'indexes');
  const passages = Array.from({ length: 30 }, (_, i) => ({
    id: `p${i}`,
    contents: `"Topic ${i}"\nParagraph ${i} is about ${['rivers', 'kings', 'films'][i % 3]} and number ${i}.`,
  }));
  await build({ name: 'c', input: writeJsonl(tmp.dir, 'c.jsonl', passages), format: 'wiki18', indexDir });
  srv = await startHttpServer(['--corpus', 'c', '--index-dir', indexDir]);
}, 900_000);
afterAll(async () => {
  await srv?.stop();
  tmp.cleanup();
});

function conformance(revision: string): { status: number | null; out: string } {
  const r = spawnSync(
    node,
    [
      cli,
      'server',
      '--url',
      `${srv.url}/mcp`,
      '--requirements',
      revision,
      '--expected-failures',
      join(REPO_ROOT, 'test', 'conformance', `baseline-${revision}.yml`),
      '-o',
      join(tmp.dir, revision),
    ],
    { encoding: 'utf8', timeout: 600_000, env: { ...process.env, NO_COLOR: '1' } },
  );
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

describe('the official MCP conformance suite against the HTTP server', () => {
  it('passes every 2025-11-25 requirement that applies', () => {
    const r = conformance('2025-11-25');
    expect(r.status, r.out.slice(-4000)).toBe(0);
    expect(r.out).toMatch(/server-initialize: [1-9]\d* passed, 0 failed/);
    expect(r.out).toMatch(/tools-list: [1-9]\d* passed, 0 failed/);
    expect(r.out).toMatch(/Baseline check passed/);
  }, 600_000);

  it('passes every 2026-07-28 requirement that applies: stateless lifecycle, caching, headers', () => {
    const r = conformance('2026-07-28');
    expect(r.status, r.out.slice(-4000)).toBe(0);
    // the stateless lifecycle's own checks (discover, _meta validation, removed methods): more than 20 pass
    expect(Number(/server-stateless: (\d+) passed/.exec(r.out)?.[1])).toBeGreaterThan(20);
    expect(r.out).toMatch(/tools-list: [1-9]\d* passed, 0 failed/);
    expect(r.out).toMatch(/Baseline check passed/);
  }, 600_000);
});

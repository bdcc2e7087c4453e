import { execFileSync, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveClientCorpus } from '../helpers/client-corpus.js';
import { npmClient } from '../helpers/modern-node.js';
import type { RunningServer } from '../helpers/http-server.js';
import { BIN, makeTempDir } from '../helpers/paths.js';

/**
 * The official MCP Inspector (npm `@modelcontextprotocol/inspector`), in its
 * CLI mode, against our server on every transport: stdio, Streamable HTTP and
 * legacy SSE, with a bearer token. It installs from the npm registry into an
 * ignored folder on first use (about 20 s, 110 MB).
 */
const PACKAGE = '@modelcontextprotocol/inspector@2.12.0';
/** Installed into test/.clients itself, where earlier runs put it (no reinstall). */
function inspectorCli(): string {
  return npmClient(PACKAGE, '', ['@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js']);
}

const tmp = makeTempDir();
const TOKEN = 'insp3ctor';
let srv: RunningServer;
let indexDir: string;
let cli: string;

beforeAll(async () => {
  cli = inspectorCli();
  ({ indexDir, srv } = await serveClientCorpus(tmp.dir, TOKEN));
}, 360_000);
afterAll(async () => {
  await srv?.stop();
  tmp.cleanup();
});

/** Runs the inspector CLI and parses the JSON it prints. */
function inspect(target: string[], method: string[]): Record<string, unknown> {
  const out = execFileSync(process.execPath, [cli, '--cli', ...target, ...method], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return JSON.parse(out) as Record<string, unknown>;
}

const search = [
  '--method',
  'tools/call',
  '--tool-name',
  'search',
  '--tool-arg',
  'query=kings of paragraph 4',
  'top_k=2',
];
const auth = ['--header', `Authorization: Bearer ${TOKEN}`];

describe('the MCP Inspector CLI', () => {
  const targets: Array<[string, () => string[]]> = [
    ['stdio', () => [process.execPath, BIN.server, '--corpus', 'c', '--index-dir', indexDir]],
    ['Streamable HTTP', () => [`${srv.url}/mcp`, ...auth]],
    ['legacy SSE', () => [`${srv.url}/sse`, '--transport', 'sse', ...auth]],
  ];
  for (const [name, target] of targets) {
    it(`lists the tools and searches over ${name}`, () => {
      const tools = inspect(target(), ['--method', 'tools/list']) as { tools: Array<{ name: string }> };
      expect(tools.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['search', 'fetch', 'list_corpora']));
      const res = inspect(target(), search) as { content: Array<{ type: string; text: string }>; isError?: boolean };
      expect(res.isError ?? false).toBe(false);
      expect(res.content.map((c) => c.text).join('\n')).toMatch(/Doc 1 \[id c4\] \(Title: Topic 4\)/);
    }, 90_000);
  }

  it('is refused over HTTP without the token', () => {
    // the inspector meets the 401 by asking for OAuth, which a run without a terminal cannot do
    const r = spawnSync(process.execPath, [cli, '--cli', `${srv.url}/mcp`, '--method', 'tools/list'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(`${r.stdout}${r.stderr}`).toMatch(/auth_required|401|Unauthorized/i);
    expect(`${r.stdout}`).not.toMatch(/"tools"/);
  }, 60_000);
});

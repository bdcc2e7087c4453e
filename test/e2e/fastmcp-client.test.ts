import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveClientCorpus } from '../helpers/client-corpus.js';
import type { RunningServer } from '../helpers/http-server.js';
import { makeTempDir, REPO_ROOT as ROOT } from '../helpers/paths.js';

/**
 * A client no one here wrote: FastMCP's Python client from PyPI, as verl's MCP
 * search tool drives a search server (SSE with a bearer token), and over
 * Streamable HTTP. It installs into an ignored virtual environment beside the
 * bench ones; with no route to PyPI the test fails and says so.
 */
const FASTMCP = 'fastmcp==4.2.3';
const VENV = join(ROOT, 'bench', '.venv-clients');
const PY = join(VENV, 'bin', 'python');

function fastmcpPython(): string {
  if (!existsSync(PY)) execFileSync('python3', ['-m', 'venv', VENV], { stdio: 'ignore' });
  try {
    execFileSync(PY, ['-c', 'import fastmcp'], { stdio: 'ignore' });
  } catch {
    try {
      execFileSync(PY, ['-m', 'pip', 'install', '-q', FASTMCP], {
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: 300_000,
      });
    } catch (err) {
      throw new Error(`could not install ${FASTMCP} from PyPI into ${VENV}: ${(err as Error).message}`);
    }
  }
  return PY;
}

const tmp = makeTempDir();
const TOKEN = 'verl-s3cret';
let srv: RunningServer;
let py: string;

beforeAll(async () => {
  py = fastmcpPython();
  ({ srv } = await serveClientCorpus(tmp.dir, TOKEN));
}, 360_000);
afterAll(async () => {
  await srv?.stop();
  tmp.cleanup();
});

describe("FastMCP's Python client", () => {
  it('lists the tools and searches over SSE with a bearer token and over Streamable HTTP, and is refused without it', () => {
    const out = JSON.parse(
      execFileSync(py, [join(ROOT, 'test/clients/fastmcp_client.py'), srv.url, TOKEN, 'kings of paragraph 4'], {
        encoding: 'utf8',
        timeout: 60_000,
      }),
    ) as Record<string, { tools: string[]; text: string[]; is_error: boolean; corpora: string[] } | string | null>;
    for (const transport of ['sse', 'streamable_http']) {
      const t = out[transport] as { tools: string[]; text: string[]; is_error: boolean; corpora: string[] };
      expect(t.tools).toEqual(expect.arrayContaining(['search', 'fetch', 'list_corpora']));
      expect(t.is_error).toBe(false);
      // the first hit is the kings paragraph number 4, in the Doc N [id …] form agents read
      expect(t.text.join('\n')).toMatch(/Doc 1 \[id c4\] \(Title: Topic 4\)/);
      expect(t.corpora.join('\n')).toMatch(/^c: 30 passages/m);
    }
    // the client reports the server's 401 as a generic MCPError; what matters is that it is refused
    expect(out['no_token']).toMatch(/Error/);
  }, 90_000);
});

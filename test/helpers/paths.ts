import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** ../shared beside the repo, or RETRIEVER_MCP_SHARED. */
export const SHARED_DIR = resolve(process.env['RETRIEVER_MCP_SHARED'] ?? join(REPO_ROOT, '..', 'shared'));
export const HAS_SHARED = existsSync(join(SHARED_DIR, 'README.md'));

if (!HAS_SHARED) {
  process.stderr.write(
    `\n*** ../shared not found at ${SHARED_DIR}: tests that need shared data are SKIPPED. ` +
      'Set RETRIEVER_MCP_SHARED to its path. ***\n\n',
  );
}

export function sharedPath(...parts: string[]): string {
  return join(SHARED_DIR, ...parts);
}

export const BIN = {
  server: join(REPO_ROOT, 'bin', 'retriever-mcp.js'),
  build: join(REPO_ROOT, 'bin', 'build-index.js'),
};

/** A temp directory removed when `cleanup` runs. */
export function makeTempDir(prefix = 'rmcp-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

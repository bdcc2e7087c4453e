import { readFileSync } from 'node:fs';

/**
 * INDEX_FORMAT_VERSION changes whenever the on-disk layout of an index changes
 * in a way an older reader cannot open. A server refuses any other version.
 */
export const INDEX_FORMAT_VERSION = 1;

/** SQLite schema version of the chunk store, kept in its `meta` table. */
export const STORE_SCHEMA_VERSION = 1;

function readToolVersion(): string {
  // dist/src/version.js → ../../package.json; src/version.ts (vitest) → ../package.json
  for (const rel of ['../../package.json', '../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'retriever-mcp' && pkg.version) return pkg.version;
    } catch {
      // try the next candidate location
    }
  }
  return '0.0.0';
}

export const TOOL_VERSION = readToolVersion();

import { readFileSync } from 'node:fs';

/**
 * INDEX_FORMAT_VERSION changes whenever the on-disk layout of an index changes
 * in a way an older reader cannot open (or could open only badly: format 2's
 * store lacks indexes a format-1 server's queries need). Builds write it; a
 * server opens the versions in READABLE_INDEX_FORMATS and refuses others.
 */
export const INDEX_FORMAT_VERSION = 2;
/** An index whose dense arm is an IVF index (dense.ivf): format 2 otherwise, which servers before it cannot serve. */
export const IVF_INDEX_FORMAT = 3;
export const READABLE_INDEX_FORMATS: readonly number[] = [1, 2, 3];

/** SQLite schema version of the chunk store, kept in its `meta` table (format 1 had schema 1). */
export const STORE_SCHEMA_VERSION = 2;
export const READABLE_STORE_SCHEMAS: readonly number[] = [1, 2];

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

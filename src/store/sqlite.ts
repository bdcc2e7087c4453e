import type BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';
import { RetrieverError } from '../errors.js';

/** The only importer of better-sqlite3: everything else sees these aliases. */
export type SqliteDatabase = BetterSqlite3.Database;
export type SqliteStatement<P extends unknown[] = unknown[], R = unknown> = BetterSqlite3.Statement<P, R>;

/**
 * better-sqlite3 13 (Node-API) on Node 22 and later, 12 (V8's node::ObjectWrap)
 * on Node 20. Node 24.19 aborts the process when a 12.x statement is
 * garbage-collected (`RemoveEnvironmentCleanupHook`: nodejs/node#65446), and
 * 13.x's prebuilt binary crashes on Node 20; the two expose the same API, so
 * the package carries both (13 as `better-sqlite3-napi`) and loads the one
 * this Node runs.
 */
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
export const SQLITE_PACKAGE = NODE_MAJOR >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';
const Database = loadBinding();

/**
 * better-sqlite3-napi is an optional dependency, so that npm on Node 20 passes
 * it over instead of warning that its engines want Node 22; on Node 22 and
 * later a failed install of it is said plainly, with the fix.
 */
function loadBinding(): typeof BetterSqlite3 {
  try {
    return createRequire(import.meta.url)(SQLITE_PACKAGE) as typeof BetterSqlite3;
  } catch (err) {
    if ((err as { code?: string }).code !== 'MODULE_NOT_FOUND') throw err;
    throw new RetrieverError(
      'IO',
      `${SQLITE_PACKAGE}, the SQLite binding Node ${process.versions.node} loads, is not installed ` +
        `(npm skips an optional dependency whose build failed): run \`npm install\` again on this Node and read its build error`,
      { cause: err },
    );
  }
}

/** A database handle opened with the binding this Node runs (tests that edit an index's SQLite file). */
export function rawDatabase(path: string, options?: BetterSqlite3.Options): SqliteDatabase {
  return new Database(path, options);
}

export interface OpenOptions {
  readonly: boolean;
  /** How a damaged read-only store is fixed, for its errors (DEFAULT_STORE_HINT). */
  hint?: string;
  /** Bulk-load settings: no journal, no fsync until the build syncs the file itself. */
  bulk?: boolean;
}

/** SQLite's page cache while a build appends rows (KiB). */
export const BULK_CACHE_KIB = 32 * 1024;
/** And while it builds the id indexes, whose sort spills to temp files past this (KiB). */
export const INDEX_BUILD_CACHE_KIB = 256 * 1024;

/** What to do about a damaged store, the end of every error about one: the index's rebuild command. */
export const DEFAULT_STORE_HINT = "rebuild the index (its manifest.json's rebuild_command)";

/**
 * SQLite's error on a served (read-only) store as one of ours, naming the
 * file and the fix; anything else is returned as it is. SQLite's own words
 * named no file ("file is not a database", "attempt to write a readonly
 * database" for a journal left beside the file) and a damaged page while
 * serving surfaced as a bare 500.
 */
export function storeError(path: string, err: unknown, hint: string = DEFAULT_STORE_HINT): unknown {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return err;
  const why = (err as Error).message;
  if (code.startsWith('SQLITE_READONLY'))
    return new RetrieverError(
      'INDEX_CORRUPT',
      `${path} has a ${path.split('/').pop()}-journal or -wal file beside it, left by a write that did not finish ` +
        `(SQLite: ${why}); a served index is never written: remove the stray file if nothing writes there, or ${hint}`,
      { cause: err },
    );
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB')
    return new RetrieverError('INDEX_CORRUPT', `${path} is damaged (SQLite: ${why}): ${hint}`, { cause: err });
  return new RetrieverError('IO', `${path} could not be read (SQLite: ${why})`, { cause: err });
}

export function openDatabase(path: string, opts: OpenOptions): SqliteDatabase {
  let db: SqliteDatabase;
  try {
    db = new Database(path, { readonly: opts.readonly, fileMustExist: opts.readonly });
  } catch (err) {
    throw new RetrieverError(
      opts.readonly ? 'INDEX_CORRUPT' : 'IO',
      `cannot open SQLite file ${path}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  if (opts.bulk) {
    // A build writes into a private temp dir that is renamed into place only
    // after an explicit fsync, so crash safety comes from the rename, not the journal.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('locking_mode = EXCLUSIVE');
    // appends need only the pages being filled: a bigger cache just held clean pages, each a first
    // touch of memory (256 MiB: 430–434k page faults for a 1M build against 376–393k, and a slower
    // build); the writer raises it while it builds the id index (ChunkStoreWriter.finishIngest)
    db.pragma(`cache_size = -${BULK_CACHE_KIB}`);
    db.pragma('temp_store = FILE');
  } else if (opts.readonly) {
    try {
      db.pragma('cache_size = -65536'); // 64 MiB per process; the OS page cache is shared
      // the header is read, and a hot journal found, on the first statement: here, not mid-request
      db.pragma('schema_version');
    } catch (err) {
      db.close();
      throw storeError(path, err, opts.hint);
    }
  }
  return db;
}

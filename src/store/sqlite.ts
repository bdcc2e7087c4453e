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
const Database = createRequire(import.meta.url)(SQLITE_PACKAGE) as typeof BetterSqlite3;

/** A database handle opened with the binding this Node runs (tests that edit an index's SQLite file). */
export function rawDatabase(path: string, options?: BetterSqlite3.Options): SqliteDatabase {
  return new Database(path, options);
}

export interface OpenOptions {
  readonly: boolean;
  /** Bulk-load settings: no journal, no fsync until the build syncs the file itself. */
  bulk?: boolean;
}

/** SQLite's page cache while a build appends rows (KiB). */
export const BULK_CACHE_KIB = 32 * 1024;
/** And while it builds the id indexes, whose sort spills to temp files past this (KiB). */
export const INDEX_BUILD_CACHE_KIB = 256 * 1024;

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
    db.pragma('cache_size = -65536'); // 64 MiB per process; the OS page cache is shared
  }
  return db;
}

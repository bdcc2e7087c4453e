import Database from 'better-sqlite3';
import { RetrieverError } from '../errors.js';

/** The only importer of better-sqlite3: everything else sees these aliases. */
export type SqliteDatabase = Database.Database;
export type SqliteStatement<P extends unknown[] = unknown[], R = unknown> = Database.Statement<P, R>;

export interface OpenOptions {
  readonly: boolean;
  /** Bulk-load settings: no journal, no fsync until the build syncs the file itself. */
  bulk?: boolean;
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
    db.pragma('cache_size = -262144'); // 256 MiB
    db.pragma('temp_store = FILE');
  } else if (opts.readonly) {
    db.pragma('cache_size = -65536'); // 64 MiB per process; the OS page cache is shared
  }
  return db;
}

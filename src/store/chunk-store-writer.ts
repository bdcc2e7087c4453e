import { RetrieverError } from '../errors.js';
import { STORE_SCHEMA_VERSION } from '../version.js';
import { SUFFIXED_ID, type ChunkInput, type DocumentInput, type TermEntry } from './chunk-store.js';
import { computeFacets, NO_FACETS } from './facets.js';
import { CHUNKS_ID_INDEX, CREATE_FILE_STAMPS, CREATE_TABLES, DOCUMENTS_ID_INDEX } from './schema.js';
import {
  BULK_CACHE_KIB,
  INDEX_BUILD_CACHE_KIB,
  openDatabase,
  type SqliteDatabase,
  type SqliteStatement,
} from './sqlite.js';

const COMMIT_EVERY = 20_000;
/** Rows of the term dictionary per INSERT statement (SQLite allows 32,766 parameters). */
const TERMS_PER_INSERT = 64;
/**
 * Document and chunk rows per INSERT statement: one row per statement spent its time crossing
 * into SQLite (400k passages: 1.58–1.86 s user CPU against 2.09–2.40 s).
 */
const ROWS_PER_INSERT = 32;

/**
 * The memory map SQLite reads the store through while it builds the id indexes: the whole file, up
 * to SQLite's cap (0x7fff0000 in better-sqlite3's build; a larger store reads the rest with pread).
 */
const INDEX_BUILD_MMAP_BYTES = 2 ** 40;

/** Bulk writer used by build-index; rows are committed in large transactions. */
export class ChunkStoreWriter {
  private readonly db: SqliteDatabase;
  private readonly docRows: RowBuffer;
  private readonly chunkRows: RowBuffer;
  private pending = 0;
  private docs = 0;
  private docsWithMetadata = 0;
  private chunks = 0;
  /** The last document added: its id and first chunk num. */
  private docId = '';
  private docFirst = 0;
  /** Every chunk id so far is its document's id (position 0) or `<document id>#<position>`. */
  private derivedIds = true;
  /** Some chunk id is `<document id>#<position>`; some chunk id that is its document's id ends like one. */
  private anySuffixed = false;
  private unsplitLooksSuffixed = false;

  constructor(
    readonly path: string,
    create = true,
  ) {
    // the bulk load runs without a journal (a crash there restarts the load);
    // later updates of a finished store keep SQLite's rollback journal, so a
    // crash mid-update cannot damage a store that a resumed build will reuse
    this.db = openDatabase(path, { readonly: false, bulk: create });
    if (create) {
      this.db.exec(CREATE_TABLES);
      this.setMeta('schema_version', String(STORE_SCHEMA_VERSION));
    }
    this.docRows = new RowBuffer(this.db, 'documents (num, id, title, metadata, first_chunk)', 5, ROWS_PER_INSERT);
    this.chunkRows = new RowBuffer(
      this.db,
      'chunks (num, id, doc_num, position, contents, body_start, n_tokens)',
      7,
      ROWS_PER_INSERT,
    );
  }

  /** Opens a finished store to update its meta table (journaled: safe to kill). */
  static reopen(path: string): ChunkStoreWriter {
    return new ChunkStoreWriter(path, false);
  }

  get documentCount(): number {
    return this.docs;
  }

  get chunkCount(): number {
    return this.chunks;
  }

  addDocument(doc: DocumentInput): number {
    this.beginIfNeeded();
    const num = this.docs++;
    const meta = doc.metadata && Object.keys(doc.metadata).length > 0 ? JSON.stringify(doc.metadata) : null;
    if (meta !== null) this.docsWithMetadata++;
    this.docRows.add(num, doc.id, doc.title, meta, this.chunks);
    this.docId = doc.id;
    this.docFirst = this.chunks;
    return num;
  }

  /** Adds the next chunk of the last document added (positions 0, 1, … in order). */
  addChunk(chunk: ChunkInput): number {
    if (chunk.docNum !== this.docs - 1 || chunk.position !== this.chunks - this.docFirst) {
      throw new RetrieverError(
        'INTERNAL',
        `chunk "${chunk.id}" (document ${chunk.docNum}, position ${chunk.position}) does not follow the last one: ` +
          `the store expects each document's chunks right after it, positions 0, 1, … (document ${this.docs - 1}, position ${this.chunks - this.docFirst} next)`,
      );
    }
    if (this.derivedIds) this.noteChunkId(chunk.id, chunk.position);
    this.beginIfNeeded();
    const num = this.chunks++;
    this.chunkRows.add(num, chunk.id, chunk.docNum, chunk.position, chunk.contents, chunk.bodyStart, chunk.nTokens);
    return num;
  }

  private stampInsert: SqliteStatement | undefined;

  /**
   * Records what a folder's file was when it was read (size and modification time), under its
   * document's id: a later build of the folder takes that document's chunks from this store
   * instead of reading the file again while both are unchanged (build/doc-reuse.ts).
   */
  addFileStamp(docId: string, bytes: number, mtimeMs: number): void {
    this.beginIfNeeded();
    if (!this.stampInsert) {
      this.db.exec(CREATE_FILE_STAMPS);
      this.stampInsert = this.db.prepare(
        'INSERT OR REPLACE INTO file_stamps (doc_id, bytes, mtime_ms) VALUES (?, ?, ?)',
      );
    }
    this.stampInsert.run(docId, bytes, Math.floor(mtimeMs));
  }

  setMeta(key: string, value: string): void {
    this.db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(key, value);
  }

  /**
   * Ends the bulk load: commits and builds the document id index, rejecting
   * duplicate ids. Chunk ids get an index of their own only when the reader
   * could not find them through their document (see schema.ts).
   */
  finishIngest(): void {
    this.commit();
    // what filters can select, kept for list_corpora: a scan only when some document has metadata
    this.setMeta('facets', JSON.stringify(this.docsWithMetadata > 0 ? computeFacets(this.db) : NO_FACETS));
    const indexChunkIds = !this.derivedIds || (this.anySuffixed && this.unsplitLooksSuffixed);
    this.setMeta('chunk_ids', indexChunkIds ? 'indexed' : 'derived');
    // an index on chunks scans the chunks table, text and all: through a memory map instead of a
    // pread per page, which was faster (the 2026-11 design notes (git show 97ad262:docs/lab-notes/2026-11-design-notes.md) "On-disk index")
    this.db.pragma(`mmap_size = ${INDEX_BUILD_MMAP_BYTES}`);
    this.db.pragma(`cache_size = -${INDEX_BUILD_CACHE_KIB}`);
    try {
      this.db.exec(DOCUMENTS_ID_INDEX + (indexChunkIds ? CHUNKS_ID_INDEX : ''));
    } catch (err) {
      throw this.describeDuplicate(err);
    } finally {
      this.db.pragma('mmap_size = 0');
      this.db.pragma(`cache_size = -${BULK_CACHE_KIB}`);
    }
  }

  /**
   * Writes the BM25 term dictionary; entries must arrive in ascending term
   * order. Rows go TERMS_PER_INSERT to a statement: one row per statement
   * spent most of its time crossing into SQLite, at the end of the build's
   * critical path (docs/lab-notes/2026-11-build-throughput.md).
   */
  writeTerms(entries: Iterable<TermEntry>): number {
    const rows = new RowBuffer(this.db, 'bm25_terms (term, df, offset, nbytes)', 4, TERMS_PER_INSERT);
    let n = 0;
    this.db.exec('BEGIN');
    for (const e of entries) {
      rows.add(e.term, e.df, e.offset, e.nbytes);
      if (++n % COMMIT_EVERY === 0) {
        this.db.exec('COMMIT');
        this.db.exec('BEGIN');
      }
    }
    rows.flush();
    this.db.exec('COMMIT');
    return n;
  }

  /** Iterates chunk texts in num order (for the BM25 and embedding passes). */
  *iterateContents(fromNum = 0): Generator<{ num: number; contents: string }> {
    this.commit();
    const stmt = this.db.prepare('SELECT num, contents FROM chunks WHERE num >= ? ORDER BY num');
    for (const row of stmt.iterate(fromNum) as Iterable<{ num: number; contents: string }>) {
      yield row;
    }
  }

  close(): void {
    this.commit();
    this.db.close();
  }

  /** Is chunk `id` one the reader can find through its document id (see schema.ts)? */
  private noteChunkId(id: string, position: number): void {
    if (id === this.docId) {
      if (position !== 0) this.derivedIds = false;
      else if (SUFFIXED_ID.test(id)) this.unsplitLooksSuffixed = true;
    } else if (id === `${this.docId}#${position}`) {
      this.anySuffixed = true;
    } else {
      this.derivedIds = false;
    }
  }

  private beginIfNeeded(): void {
    if (this.pending === 0) this.db.exec('BEGIN');
    if (++this.pending >= COMMIT_EVERY) this.commit();
  }

  /** Writes the buffered rows and commits them. */
  private commit(): void {
    this.docRows.flush();
    this.chunkRows.flush();
    if (this.db.inTransaction) this.db.exec('COMMIT');
    this.pending = 0;
  }

  private describeDuplicate(err: unknown): Error {
    const dupDoc = this.db.prepare('SELECT id FROM documents GROUP BY id HAVING COUNT(*) > 1 LIMIT 1').get() as
      { id: string } | undefined;
    const dupChunk = dupDoc
      ? undefined
      : (this.db.prepare('SELECT id FROM chunks GROUP BY id HAVING COUNT(*) > 1 LIMIT 1').get() as
          { id: string } | undefined);
    const dup = dupDoc?.id ?? dupChunk?.id;
    if (dup === undefined) return err as Error;
    const generated =
      dupChunk && SUFFIXED_ID.test(dup)
        ? ` (a split document's chunks are named <document id>#<position>, so a document with id "${dup}" collides with one: rename that document)`
        : '';
    return new RetrieverError(
      'BAD_INPUT',
      `duplicate ${dupDoc ? 'document' : 'chunk'} id "${dup}" in the input${generated}: ids must be unique; fix the input file`,
      { cause: err },
    );
  }
}

/**
 * Rows for one table, inserted `perInsert` to a statement. Rows are held
 * until a group is full or `flush`: the writer flushes before every commit
 * and before anything reads the tables.
 */
class RowBuffer {
  private readonly many: SqliteStatement;
  private readonly one: SqliteStatement;
  private readonly args: unknown[] = [];

  constructor(
    db: SqliteDatabase,
    into: string,
    private readonly columns: number,
    private readonly perInsert: number,
  ) {
    const row = `(${Array(columns).fill('?').join(', ')})`;
    this.many = db.prepare(`INSERT INTO ${into} VALUES ${Array(perInsert).fill(row).join(', ')}`);
    this.one = db.prepare(`INSERT INTO ${into} VALUES ${row}`);
  }

  add(...row: unknown[]): void {
    for (const v of row) this.args.push(v);
    if (this.args.length === this.columns * this.perInsert) {
      this.many.run(this.args);
      this.args.length = 0;
    }
  }

  flush(): void {
    for (let i = 0; i < this.args.length; i += this.columns) this.one.run(this.args.slice(i, i + this.columns));
    this.args.length = 0;
  }
}

import { RetrieverError } from '../errors.js';
import { STORE_SCHEMA_VERSION } from '../version.js';
import { CREATE_INDEXES, CREATE_TABLES } from './schema.js';
import { openDatabase, type SqliteDatabase, type SqliteStatement } from './sqlite.js';

export type Metadata = Record<string, unknown>;

export interface DocumentInput {
  id: string;
  title: string;
  metadata?: Metadata | null;
}

export interface ChunkInput {
  id: string;
  docNum: number;
  position: number;
  contents: string;
  bodyStart: number;
  nTokens: number;
}

export interface ChunkRecord {
  num: number;
  id: string;
  docId: string;
  position: number;
  title: string;
  contents: string;
  /** The body without the title line: what an agent reads. */
  text: string;
  nTokens: number;
  metadata?: Metadata;
}

export interface TermEntry {
  term: string;
  df: number;
  offset: number;
  nbytes: number;
}

/** A parsed metadata filter (see search/filters.ts); every value is bound as a parameter. */
export interface FilterSpec {
  source?: string[];
  category?: string[];
  doc_id?: string[];
  /** ISO timestamps */
  published_after?: string;
  published_before?: string;
  beforeExclusive?: boolean;
}

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
  private chunks = 0;

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
    this.docRows = new RowBuffer(this.db, 'documents (num, id, title, metadata)', 4, ROWS_PER_INSERT);
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
    this.docRows.add(num, doc.id, doc.title, meta);
    return num;
  }

  addChunk(chunk: ChunkInput): number {
    this.beginIfNeeded();
    const num = this.chunks++;
    this.chunkRows.add(num, chunk.id, chunk.docNum, chunk.position, chunk.contents, chunk.bodyStart, chunk.nTokens);
    return num;
  }

  setMeta(key: string, value: string): void {
    this.db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(key, value);
  }

  /** Ends the bulk load: commits and builds the id indexes, rejecting duplicate ids. */
  finishIngest(): void {
    this.commit();
    // each index scans the chunks table, text and all (776 MB at 1M passages): through a memory
    // map instead of a pread per page, 1.93 s against 2.27–2.35 s for the three at 1M
    this.db.pragma(`mmap_size = ${INDEX_BUILD_MMAP_BYTES}`);
    try {
      this.db.exec(CREATE_INDEXES);
    } catch (err) {
      throw this.describeDuplicate(err);
    } finally {
      this.db.pragma('mmap_size = 0');
    }
  }

  /**
   * Writes the BM25 term dictionary; entries must arrive in ascending term
   * order. Rows go TERMS_PER_INSERT to a statement: one row per statement
   * spent most of its time crossing into SQLite (1.16M terms of a 1M-passage
   * build: 1.26–1.30 s against 0.55–0.56 s), at the end of the build's
   * critical path.
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
    return new RetrieverError(
      'BAD_INPUT',
      `duplicate ${dupDoc ? 'document' : 'chunk'} id "${dup}" in the input: ids must be unique; fix the input file`,
      { cause: err },
    );
  }
}

interface ChunkRow {
  num: number;
  id: string;
  doc_id: string;
  position: number;
  title: string;
  contents: string;
  body_start: number;
  n_tokens: number;
  metadata: string | null;
}

const CHUNK_SELECT = `SELECT c.num, c.id, d.id AS doc_id, c.position, d.title, c.contents,
  c.body_start, c.n_tokens, d.metadata FROM chunks c JOIN documents d ON d.num = c.doc_num`;

/** Read-only view of a built chunk store, used while serving. */
export class ChunkStore {
  private readonly db: SqliteDatabase;
  private readonly byNum: SqliteStatement;
  private readonly byId: SqliteStatement;
  private readonly docChunks: SqliteStatement;
  private readonly rangeStmt: SqliteStatement;
  private readonly idStmt: SqliteStatement;
  private readonly termStmt: SqliteStatement;
  private rangeContents: SqliteStatement | undefined;

  constructor(readonly path: string) {
    this.db = openDatabase(path, { readonly: true });
    try {
      this.byNum = this.db.prepare(`${CHUNK_SELECT} WHERE c.num = ?`);
      this.byId = this.db.prepare(`${CHUNK_SELECT} WHERE c.id = ?`);
      this.docChunks = this.db.prepare(
        `${CHUNK_SELECT} WHERE c.doc_num = (SELECT num FROM documents WHERE id = ?) ORDER BY c.position LIMIT ?`,
      );
      this.rangeStmt = this.db.prepare(
        `${CHUNK_SELECT} WHERE c.doc_num = (SELECT num FROM documents WHERE id = ?) AND c.position BETWEEN ? AND ? ORDER BY c.position`,
      );
      this.idStmt = this.db.prepare('SELECT id FROM chunks WHERE num = ?').pluck();
      this.termStmt = this.db.prepare('SELECT df, offset, nbytes FROM bm25_terms WHERE term = ?');
    } catch (err) {
      this.db.close();
      throw new RetrieverError(
        'INDEX_CORRUPT',
        `${path} is not a retriever-mcp chunk store (${(err as Error).message}): rebuild the index`,
        { cause: err },
      );
    }
  }

  getMeta(key: string): string | undefined {
    const row = this.db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
    return row?.value;
  }

  /** Highest chunk num + 1, via the rowid B-tree (no table scan). */
  chunkSpan(): number {
    const row = this.db.prepare('SELECT MAX(num) AS m FROM chunks').get() as { m: number | null };
    return row.m === null ? 0 : row.m + 1;
  }

  counts(): { documents: number; chunks: number; terms: number } {
    const one = (sql: string): number => (this.db.prepare(sql).get() as { n: number }).n;
    return {
      documents: one('SELECT COUNT(*) AS n FROM documents'),
      chunks: one('SELECT COUNT(*) AS n FROM chunks'),
      terms: one('SELECT COUNT(*) AS n FROM bm25_terms'),
    };
  }

  getChunk(num: number): ChunkRecord | undefined {
    const row = this.byNum.get(num) as ChunkRow | undefined;
    return row ? toRecord(row) : undefined;
  }

  getChunkById(id: string): ChunkRecord | undefined {
    const row = this.byId.get(id) as ChunkRow | undefined;
    return row ? toRecord(row) : undefined;
  }

  /** The id of chunk `num` without reading its text (RRF tie-breaks). */
  getChunkId(num: number): string | undefined {
    return this.idStmt.get(num) as string | undefined;
  }

  /** Up to `limit` chunks of a document in order, or [] when the document is unknown. */
  getDocumentChunks(docId: string, limit: number): ChunkRecord[] {
    return (this.docChunks.all(docId, limit) as ChunkRow[]).map(toRecord);
  }

  /** Chunks of a document with positions in [from, to], in order. */
  getDocumentRange(docId: string, from: number, to: number): ChunkRecord[] {
    return (this.rangeStmt.all(docId, from, to) as ChunkRow[]).map(toRecord);
  }

  /** Contents of chunks [from, to) in num order (the embedding pass). */
  contentsRange(from: number, to: number): string[] {
    this.rangeContents ??= this.db
      .prepare('SELECT contents FROM chunks WHERE num >= ? AND num < ? ORDER BY num')
      .pluck();
    return this.rangeContents.all(from, to) as string[];
  }

  /** Sorted nums of the chunks whose document matches `f`. */
  filterChunkNums(f: FilterSpec): Uint32Array {
    const where: string[] = [];
    const params: string[] = [];
    const inList = (expr: string, vals: string[]): void => {
      where.push(`${expr} IN (${vals.map(() => '?').join(', ')})`);
      params.push(...vals);
    };
    if (f.source) inList("lower(json_extract(d.metadata, '$.source'))", f.source);
    if (f.category) inList("lower(json_extract(d.metadata, '$.category'))", f.category);
    if (f.doc_id) inList('d.id', f.doc_id);
    const date = "julianday(json_extract(d.metadata, '$.published_at'))";
    if (f.published_after) {
      where.push(`${date} >= julianday(?)`);
      params.push(f.published_after);
    }
    if (f.published_before) {
      where.push(`${date} ${f.beforeExclusive ? '<' : '<='} julianday(?)`);
      params.push(f.published_before);
    }
    const sql = `SELECT c.num FROM chunks c JOIN documents d ON d.num = c.doc_num${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY c.num`;
    return Uint32Array.from(
      this.db
        .prepare(sql)
        .pluck()
        .all(...params) as number[],
    );
  }

  lookupTerm(term: string): { df: number; offset: number; nbytes: number } | undefined {
    return this.termStmt.get(term) as { df: number; offset: number; nbytes: number } | undefined;
  }

  close(): void {
    this.db.close();
  }
}

function toRecord(row: ChunkRow): ChunkRecord {
  const rec: ChunkRecord = {
    num: row.num,
    id: row.id,
    docId: row.doc_id,
    position: row.position,
    title: row.title,
    contents: row.contents,
    text: row.contents.slice(row.body_start),
    nTokens: row.n_tokens,
  };
  if (row.metadata) rec.metadata = JSON.parse(row.metadata) as Metadata;
  return rec;
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

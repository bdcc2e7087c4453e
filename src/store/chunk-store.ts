import { RetrieverError } from '../errors.js';
import { STORE_SCHEMA_VERSION } from '../version.js';
import { CHUNKS_ID_INDEX, CREATE_TABLES, DOCUMENTS_ID_INDEX } from './schema.js';
import {
  BULK_CACHE_KIB,
  INDEX_BUILD_CACHE_KIB,
  openDatabase,
  type SqliteDatabase,
  type SqliteStatement,
} from './sqlite.js';

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

/** An id that ends like a split chunk's: `#` and a position written without leading zeros. */
const SUFFIXED_ID = /#(?:0|[1-9][0-9]*)$/;
/** Positions past this are no chunk's (and would lose precision as SQLite integers in arithmetic). */
const MAX_POSITION = 2 ** 31;

/** Bulk writer used by build-index; rows are committed in large transactions. */
export class ChunkStoreWriter {
  private readonly db: SqliteDatabase;
  private readonly docRows: RowBuffer;
  private readonly chunkRows: RowBuffer;
  private pending = 0;
  private docs = 0;
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
    const indexChunkIds = !this.derivedIds || (this.anySuffixed && this.unsplitLooksSuffixed);
    this.setMeta('chunk_ids', indexChunkIds ? 'indexed' : 'derived');
    // an index on chunks scans the chunks table, text and all (776 MB at 1M passages): through a
    // memory map instead of a pread per page (1.93 s against 2.27–2.35 s for schema 1's three at 1M)
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
  private readonly idStmt: SqliteStatement;
  private readonly termStmt: SqliteStatement;
  private rangeContents: SqliteStatement | undefined;
  /** Schema 2: a document's chunk span; chunks by num range. Undefined for schema 1. */
  private readonly spanStmt: SqliteStatement | undefined;
  private readonly numRange: SqliteStatement | undefined;
  /** Schema 1: chunks by (doc_num, position) through its chunks_doc index. */
  private readonly docChunks: SqliteStatement | undefined;
  private readonly rangeStmt: SqliteStatement | undefined;
  /** Chunk ids found through their document (schema 2 without chunks_id). */
  private readonly derivedIds: boolean;

  constructor(readonly path: string) {
    this.db = openDatabase(path, { readonly: true });
    try {
      const schema = this.getMeta('schema_version');
      this.derivedIds = this.getMeta('chunk_ids') === 'derived';
      this.byNum = this.db.prepare(`${CHUNK_SELECT} WHERE c.num = ?`);
      this.byId = this.db.prepare(
        this.derivedIds
          ? `${CHUNK_SELECT} WHERE c.num IN (SELECT first_chunk FROM documents WHERE id = @id
               UNION ALL SELECT first_chunk + @position FROM documents WHERE id = @doc) AND c.id = @id`
          : `${CHUNK_SELECT} WHERE c.id = ?`,
      );
      if (schema === '1') {
        this.docChunks = this.db.prepare(
          `${CHUNK_SELECT} WHERE c.doc_num = (SELECT num FROM documents WHERE id = ?) ORDER BY c.position LIMIT ?`,
        );
        this.rangeStmt = this.db.prepare(
          `${CHUNK_SELECT} WHERE c.doc_num = (SELECT num FROM documents WHERE id = ?) AND c.position BETWEEN ? AND ? ORDER BY c.position`,
        );
      } else {
        this.spanStmt = this.db.prepare(
          `SELECT d.first_chunk AS first, (SELECT n.first_chunk FROM documents n WHERE n.num = d.num + 1) AS next
           FROM documents d WHERE d.id = ?`,
        );
        this.numRange = this.db.prepare(`${CHUNK_SELECT} WHERE c.num BETWEEN ? AND ? ORDER BY c.num LIMIT ?`);
      }
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
    let row: ChunkRow | undefined;
    if (this.derivedIds) {
      // the chunk is its document's first (the id is the document's) or `<document id>#<position>`
      const cut = SUFFIXED_ID.exec(id);
      const position = cut ? Number(id.slice(cut.index + 1)) : 0;
      const split = cut !== null && position <= MAX_POSITION;
      row = this.byId.get({ id, doc: split ? id.slice(0, cut.index) : null, position: split ? position : 0 }) as
        ChunkRow | undefined;
    } else {
      row = this.byId.get(id) as ChunkRow | undefined;
    }
    return row ? toRecord(row) : undefined;
  }

  /** The id of chunk `num` without reading its text (RRF tie-breaks). */
  getChunkId(num: number): string | undefined {
    return this.idStmt.get(num) as string | undefined;
  }

  /** Up to `limit` chunks of a document in order, or [] when the document is unknown. */
  getDocumentChunks(docId: string, limit: number): ChunkRecord[] {
    if (this.docChunks) return (this.docChunks.all(docId, limit) as ChunkRow[]).map(toRecord);
    return this.positions(docId, 0, Number.MAX_SAFE_INTEGER, limit);
  }

  /** Chunks of a document with positions in [from, to], in order. */
  getDocumentRange(docId: string, from: number, to: number): ChunkRecord[] {
    if (this.rangeStmt) return (this.rangeStmt.all(docId, from, to) as ChunkRow[]).map(toRecord);
    return this.positions(docId, from, to, Number.MAX_SAFE_INTEGER);
  }

  /** Schema 2: up to `limit` chunks of the document with positions in [from, to], by num range. */
  private positions(docId: string, from: number, to: number, limit: number): ChunkRecord[] {
    const span = (this.spanStmt as SqliteStatement).get(docId) as { first: number; next: number | null } | undefined;
    if (!span) return [];
    const lo = span.first + Math.max(0, from);
    const hi = Math.min(
      span.next === null ? Number.MAX_SAFE_INTEGER : span.next - 1,
      span.first + Math.min(to, MAX_POSITION),
    );
    if (lo > hi || limit <= 0) return [];
    return ((this.numRange as SqliteStatement).all(lo, hi, limit) as ChunkRow[]).map(toRecord);
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
    const filter = where.length ? ` WHERE ${where.join(' AND ')}` : '';
    if (this.docChunks) {
      // schema 1: through its chunks_doc index
      const sql = `SELECT c.num FROM chunks c JOIN documents d ON d.num = c.doc_num${filter} ORDER BY c.num`;
      return Uint32Array.from(
        this.db
          .prepare(sql)
          .pluck()
          .all(...params) as number[],
      );
    }
    // the matching documents' chunk spans, in num order, laid end to end
    const spans = this.db
      .prepare(
        `SELECT d.first_chunk AS first, (SELECT n.first_chunk FROM documents n WHERE n.num = d.num + 1) AS next
         FROM documents d${filter} ORDER BY d.num`,
      )
      .raw()
      .all(...params) as Array<[number, number | null]>;
    // only the last document has no next one: its chunks run to the end
    const last = spans.length > 0 && (spans[spans.length - 1] as [number, number | null])[1] === null;
    const end = last ? this.chunkSpan() : 0;
    let total = 0;
    for (const [first, next] of spans) total += (next ?? end) - first;
    const nums = new Uint32Array(total);
    let at = 0;
    for (const [first, next] of spans) {
      const stop = next ?? end;
      for (let n = first; n < stop; n++) nums[at++] = n;
    }
    return nums;
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

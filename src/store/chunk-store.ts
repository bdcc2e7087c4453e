import { computeFacets, NO_FACETS, type Facets } from './facets.js';
export type { Facets } from './facets.js';
import { RetrieverError } from '../errors.js';
import { DEFAULT_STORE_HINT, openDatabase, storeError, type SqliteDatabase, type SqliteStatement } from './sqlite.js';

export type Metadata = Record<string, unknown>;

export interface DocumentInput {
  id: string;
  title: string;
  metadata?: Metadata | null;
}

/** A document as a store holds it, for a rebuild that takes it over unchanged. */
export interface StoredDocument {
  title: string;
  metadata: Metadata | undefined;
  chunks: Array<{ id: string; contents: string; bodyStart: number; nTokens: number }>;
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

/** An id that ends like a split chunk's: `#` and a position written without leading zeros. */
export const SUFFIXED_ID = /#(?:0|[1-9][0-9]*)$/;
/** Positions past this are no chunk's (and would lose precision as SQLite integers in arithmetic). */
const MAX_POSITION = 2 ** 31;

/**
 * A chunk's stored fields, as the SQLite store selects them or a search
 * engine's document holds them; `M` is how the metadata is kept.
 */
export interface StoredChunk<M> {
  num: number;
  id: string;
  doc_id: string;
  position: number;
  title: string;
  contents: string;
  body_start: number;
  n_tokens: number;
  metadata?: M;
}

type ChunkRow = StoredChunk<string | null>;

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
  private rangePassages: SqliteStatement | undefined;
  private rangeRecords: SqliteStatement | undefined;
  private reuseChunks: SqliteStatement | undefined;
  /** Schema 2: a document's chunk span; chunks by num range. Undefined for schema 1. */
  private readonly spanStmt: SqliteStatement | undefined;
  private readonly numRange: SqliteStatement | undefined;
  /** Schema 1: chunks by (doc_num, position) through its chunks_doc index. */
  private readonly docChunks: SqliteStatement | undefined;
  private readonly rangeStmt: SqliteStatement | undefined;
  /** Chunk ids found through their document (schema 2 without chunks_id). */
  private readonly derivedIds: boolean;

  /** `hint`: how a damaged store is fixed (the index's rebuild command), ending every error about it. */
  constructor(
    readonly path: string,
    private readonly hint: string = DEFAULT_STORE_HINT,
  ) {
    this.db = openDatabase(path, { readonly: true, hint });
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
      const known = storeError(path, err, hint);
      if (known !== err) throw known;
      throw new RetrieverError(
        'INDEX_CORRUPT',
        `${path} is not a retriever-mcp chunk store (${(err as Error).message}): ${hint}`,
        { cause: err },
      );
    }
  }

  /** Runs a read, with SQLite's errors turned into ours naming this file and the fix (storeError). */
  private read<T>(query: () => T): T {
    try {
      return query();
    } catch (err) {
      throw storeError(this.path, err, this.hint);
    }
  }

  getMeta(key: string): string | undefined {
    return this.read(() => {
      const row = this.db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
      return row?.value;
    });
  }

  /** Highest chunk num + 1, via the rowid B-tree (no table scan). */
  chunkSpan(): number {
    return this.read(() => {
      const row = this.db.prepare('SELECT MAX(num) AS m FROM chunks').get() as { m: number | null };
      return row.m === null ? 0 : row.m + 1;
    });
  }

  counts(): { documents: number; chunks: number; terms: number } {
    return this.read(() => {
      const one = (sql: string): number => (this.db.prepare(sql).get() as { n: number }).n;
      return {
        documents: one('SELECT COUNT(*) AS n FROM documents'),
        chunks: one('SELECT COUNT(*) AS n FROM chunks'),
        terms: one('SELECT COUNT(*) AS n FROM bm25_terms'),
      };
    });
  }

  getChunk(num: number): ChunkRecord | undefined {
    return this.read(() => {
      const row = this.byNum.get(num) as ChunkRow | undefined;
      return row ? toRecord(row) : undefined;
    });
  }

  getChunkById(id: string): ChunkRecord | undefined {
    return this.read(() => {
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
    });
  }

  /** The id of chunk `num` without reading its text (RRF tie-breaks). */
  getChunkId(num: number): string | undefined {
    return this.read(() => {
      return this.idStmt.get(num) as string | undefined;
    });
  }

  /** Up to `limit` chunks of a document in order, or [] when the document is unknown. */
  getDocumentChunks(docId: string, limit: number): ChunkRecord[] {
    return this.read(() => {
      if (this.docChunks) return (this.docChunks.all(docId, limit) as ChunkRow[]).map(toRecord);
      return this.positions(docId, 0, Number.MAX_SAFE_INTEGER, limit);
    });
  }

  /** Chunks of a document with positions in [from, to], in order. */
  getDocumentRange(docId: string, from: number, to: number): ChunkRecord[] {
    return this.read(() => {
      if (this.rangeStmt) return (this.rangeStmt.all(docId, from, to) as ChunkRow[]).map(toRecord);
      return this.positions(docId, from, to, Number.MAX_SAFE_INTEGER);
    });
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

  /** Chunks [from, to) in num order, whole records (pushing a corpus to a search engine). */
  chunkRange(from: number, to: number): ChunkRecord[] {
    return this.read(() => {
      this.rangeRecords ??= this.db.prepare(`${CHUNK_SELECT} WHERE c.num >= ? AND c.num < ? ORDER BY c.num`);
      return (this.rangeRecords.all(from, to) as ChunkRow[]).map(toRecord);
    });
  }

  /** The folder files this store was built from, by document id (file_stamps), or an empty map. */
  fileStamps(): Map<string, { bytes: number; mtimeMs: number }> {
    return this.read(() => {
      const has = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'file_stamps'").get();
      if (!has) return new Map();
      const rows = this.db.prepare('SELECT doc_id AS id, bytes, mtime_ms AS mtimeMs FROM file_stamps').all() as Array<{
        id: string;
        bytes: number;
        mtimeMs: number;
      }>;
      return new Map(rows.map((r) => [r.id, { bytes: r.bytes, mtimeMs: r.mtimeMs }]));
    });
  }

  /** A document as stored, with its chunks in order (schema 2), for a rebuild that re-uses it; or undefined. */
  storedDocument(docId: string): StoredDocument | undefined {
    return this.read(() => {
      const doc = this.db
        .prepare(
          `SELECT d.title, d.metadata, d.first_chunk AS first,
             coalesce((SELECT n.first_chunk FROM documents n WHERE n.num = d.num + 1), (SELECT max(num) + 1 FROM chunks)) AS next
           FROM documents d WHERE d.id = ?`,
        )
        .get(docId) as { title: string; metadata: string | null; first: number; next: number | null } | undefined;
      if (!doc || doc.next === null) return undefined;
      this.reuseChunks ??= this.db.prepare(
        'SELECT id, contents, body_start AS bodyStart, n_tokens AS nTokens FROM chunks WHERE num >= ? AND num < ? ORDER BY num',
      );
      const chunks = this.reuseChunks.all(doc.first, doc.next) as StoredDocument['chunks'];
      return {
        title: doc.title,
        metadata: doc.metadata ? (JSON.parse(doc.metadata) as Metadata) : undefined,
        chunks,
      };
    });
  }

  /** Contents of chunks [from, to) in num order (the embedding pass). */
  /** Chunks `from` ≤ num < `to` as stored, with where each body starts (for the dense arm's text rule). */
  passagesRange(from: number, to: number): Array<{ contents: string; bodyStart: number }> {
    return this.read(() => {
      this.rangePassages ??= this.db.prepare(
        'SELECT contents, body_start AS bodyStart FROM chunks WHERE num >= ? AND num < ? ORDER BY num',
      );
      return this.rangePassages.all(from, to) as Array<{ contents: string; bodyStart: number }>;
    });
  }

  contentsRange(from: number, to: number): string[] {
    return this.read(() => {
      this.rangeContents ??= this.db
        .prepare('SELECT contents FROM chunks WHERE num >= ? AND num < ? ORDER BY num')
        .pluck();
      return this.rangeContents.all(from, to) as string[];
    });
  }

  /**
   * What a filter can select, as the build recorded it; an index built before
   * builds recorded it is scanned once if it is small, and reports nothing otherwise.
   */
  facets(): Facets {
    return this.read(() => {
      const kept = this.getMeta('facets');
      if (kept !== undefined) return JSON.parse(kept) as Facets;
      const docs = (this.db.prepare('SELECT count(*) FROM documents').pluck().get() as number) ?? 0;
      return docs <= 1_000_000 ? computeFacets(this.db) : NO_FACETS;
    });
  }

  /** Sorted nums of the chunks whose document matches `f`. */
  filterChunkNums(f: FilterSpec): Uint32Array {
    return this.read(() => {
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
    });
  }

  lookupTerm(term: string): { df: number; offset: number; nbytes: number } | undefined {
    return this.read(() => {
      return this.termStmt.get(term) as { df: number; offset: number; nbytes: number } | undefined;
    });
  }

  close(): void {
    this.db.close();
  }
}

function toRecord(row: ChunkRow): ChunkRecord {
  return chunkRecord(row, row.metadata ? (JSON.parse(row.metadata) as Metadata) : undefined);
}

/** The record of a stored chunk, with its metadata already parsed. */
export function chunkRecord(s: StoredChunk<unknown>, metadata: Metadata | undefined): ChunkRecord {
  const rec: ChunkRecord = {
    num: s.num,
    id: s.id,
    docId: s.doc_id,
    position: s.position,
    title: s.title,
    contents: s.contents,
    text: s.contents.slice(s.body_start),
    nTokens: s.n_tokens,
  };
  if (metadata !== undefined) rec.metadata = chunkMetadata(metadata, s.position);
  return rec;
}

/**
 * A document's metadata as one chunk's: a PDF's `chunk_pages` (the pages of
 * each chunk, by position, kept once per document) becomes this chunk's `pages`.
 */
function chunkMetadata(metadata: Metadata, position: number): Metadata {
  const pages = metadata['chunk_pages'];
  if (!Array.isArray(pages)) return metadata;
  const { chunk_pages: _, ...rest } = metadata;
  const own: unknown = pages[position];
  return own === undefined ? rest : { ...rest, pages: own };
}

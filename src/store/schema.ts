/**
 * Chunk store schema. `num` columns are dense 0-based integers: a chunk's num
 * is its row in the BM25 norms file, the vector file and the ANN index, so a
 * hit maps back to text with one primary-key lookup.
 * A document's chunks have consecutive nums in position order (the writer
 * checks it), so `documents.first_chunk` finds them with a range of the
 * chunks' primary key, and a chunk id, which is its document's id or
 * `<document id>#<position>`, is found through the document id index: the
 * only secondary index, created after the bulk load (sorting once is far
 * faster than maintaining a B-tree under 21M random-order inserts). A store
 * whose chunk ids do not follow that pattern, or could collide (a document
 * id ending in `#<number>` beside split documents), also gets `chunks_id`.
 *
 * Schema 1 (index format 1) had no first_chunk and indexed chunks by id and by
 * (doc_num, position); building those two indexes was 1.4 s of a 1M-passage
 * build's 2.0 s of index creation. The reader still opens it.
 */
/** The tables both schemas share. */
const META_TABLE = `
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
`;

const CHUNKS_AND_TERMS_TABLES = `
CREATE TABLE chunks (
  num        INTEGER PRIMARY KEY,
  id         TEXT NOT NULL,
  doc_num    INTEGER NOT NULL,
  position   INTEGER NOT NULL,  -- 0-based position inside the document
  contents   TEXT NOT NULL,     -- the indexed and embedded text: title line + body
  body_start INTEGER NOT NULL,  -- UTF-16 offset where the body starts in contents
  n_tokens   INTEGER NOT NULL   -- chunker tokens of contents
);

CREATE TABLE bm25_terms (
  term   TEXT PRIMARY KEY,
  df     INTEGER NOT NULL,
  offset INTEGER NOT NULL,      -- byte offset in bm25.postings
  nbytes INTEGER NOT NULL
) WITHOUT ROWID;
`;

export const CREATE_TABLES = `${META_TABLE}
CREATE TABLE documents (
  num         INTEGER PRIMARY KEY,
  id          TEXT NOT NULL,
  title       TEXT NOT NULL,
  metadata    TEXT,             -- JSON object or NULL
  first_chunk INTEGER NOT NULL  -- its chunks are nums [first_chunk, the next document's first_chunk)
);
${CHUNKS_AND_TERMS_TABLES}`;

/** Schema 1's tables: documents without first_chunk (tests build a schema-1 store with these). */
export const CREATE_TABLES_V1 = `${META_TABLE}
CREATE TABLE documents (
  num      INTEGER PRIMARY KEY,
  id       TEXT NOT NULL,
  title    TEXT NOT NULL,
  metadata TEXT            -- JSON object or NULL
);
${CHUNKS_AND_TERMS_TABLES}`;

/**
 * A folder's files as they were read (a store of another format has no such table): size and
 * modification time under the document's id, so that a rebuild takes an unchanged file's chunks
 * from the previous store. Readers that do not know the table never look at it.
 */
export const CREATE_FILE_STAMPS = `CREATE TABLE IF NOT EXISTS file_stamps (
  doc_id   TEXT PRIMARY KEY,
  bytes    INTEGER NOT NULL,
  mtime_ms INTEGER NOT NULL
) WITHOUT ROWID;`;

export const DOCUMENTS_ID_INDEX = 'CREATE UNIQUE INDEX documents_id ON documents(id);';
export const CHUNKS_ID_INDEX = 'CREATE UNIQUE INDEX chunks_id ON chunks(id);';

/** Schema 1's indexes (tests build a schema-1 store with these and CREATE_TABLES_V1). */
export const CREATE_INDEXES_V1 = `
CREATE UNIQUE INDEX documents_id ON documents(id);
CREATE UNIQUE INDEX chunks_id ON chunks(id);
CREATE INDEX chunks_doc ON chunks(doc_num, position);
`;

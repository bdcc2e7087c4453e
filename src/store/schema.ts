/**
 * Chunk store schema. `num` columns are dense 0-based integers: a chunk's num
 * is its row in the BM25 norms file, the vector file and the ANN index, so a
 * hit maps back to text with one primary-key lookup.
 * Secondary indexes are created after the bulk load (sorting once is far
 * faster than maintaining a B-tree under 21M random-order inserts).
 */
export const CREATE_TABLES = `
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE documents (
  num      INTEGER PRIMARY KEY,
  id       TEXT NOT NULL,
  title    TEXT NOT NULL,
  metadata TEXT            -- JSON object or NULL
);

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

export const CREATE_INDEXES = `
CREATE UNIQUE INDEX documents_id ON documents(id);
CREATE UNIQUE INDEX chunks_id ON chunks(id);
CREATE INDEX chunks_doc ON chunks(doc_num, position);
`;

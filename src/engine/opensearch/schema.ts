/**
 * How a corpus is laid out in OpenSearch: one index per pushed build behind
 * an alias named after the corpus, one document per chunk, and one record per
 * corpus in a small catalogue index holding its manifest and push state.
 */
import type { Manifest } from '../../index/manifest.js';
import type { ParsedFilter } from '../../search/filters.js';
import { chunkRecord, type ChunkRecord, type Metadata, type StoredChunk } from '../../store/chunk-store.js';

/** The catalogue of pushed corpora: one document per corpus name. */
export const CATALOGUE = 'retriever-mcp-corpora';

/** The alias that serves `name`; it points at the index of the last complete push. */
export function aliasFor(name: string): string {
  return `retriever-mcp-${name.toLowerCase()}`;
}

/** The index one build of `name` is pushed into. */
export function indexFor(name: string, buildId: string): string {
  return `${aliasFor(name)}-${buildId.toLowerCase().replace(/[^a-z0-9]/g, '')}`;
}

/** A corpus's catalogue record. */
export interface CatalogueEntry {
  name: string;
  build_id: string;
  /** 'pushing' until every chunk is in and the alias points at `index`. */
  state: 'pushing' | 'ready';
  index: string;
  /** Chunks [0, pushed) are in the index (a resumed push starts here). */
  pushed: number;
  chunks: number;
  updated_at: string;
  /** The local build's manifest.json, verbatim. */
  manifest: string;
}

export const CATALOGUE_BODY = {
  settings: { index: { number_of_shards: 1, auto_expand_replicas: '0-2' } },
  mappings: {
    dynamic: false,
    properties: { name: { type: 'keyword' }, state: { type: 'keyword' }, build_id: { type: 'keyword' } },
  },
};

export interface LayoutOptions {
  shards: number;
  replicas: number;
}

/**
 * The chunk index: BM25 with the build's k1 and b over the `english`
 * analyzer (Lucene's, as pyserini's), and Lucene HNSW over the build's own
 * vectors with its connectivity. Refresh is off while pushing.
 */
export function chunkIndexBody(m: Manifest, o: LayoutOptions): Record<string, unknown> {
  const properties: Record<string, unknown> = {
    num: { type: 'integer' },
    id: { type: 'keyword' },
    doc_id: { type: 'keyword' },
    position: { type: 'integer' },
    title: { type: 'keyword', index: false, doc_values: false },
    contents: { type: 'text', analyzer: 'english' },
    body_start: { type: 'integer', index: false, doc_values: false },
    n_tokens: { type: 'integer', index: false, doc_values: false },
    metadata: { type: 'object', enabled: false },
    // filter fields, copied from the document's metadata (lower-cased as local filters compare them)
    source: { type: 'keyword' },
    category: { type: 'keyword' },
    // the values as written, for list_corpora's facets (the fields above are lower-cased for filters)
    source_label: { type: 'keyword', index: false, doc_values: true },
    category_label: { type: 'keyword', index: false, doc_values: true },
    published_at: { type: 'date', ignore_malformed: true },
  };
  if (m.dense) {
    // the engine builds its own HNSW graph: the local graph's shape where there is one
    const hnsw = m.dense.ann?.library === 'usearch' ? m.dense.ann : undefined;
    properties['vector'] = {
      type: 'knn_vector',
      dimension: m.dense.encoder.dim,
      space_type: 'innerproduct',
      method: {
        name: 'hnsw',
        engine: 'lucene',
        parameters: {
          m: hnsw?.connectivity ?? 16,
          ef_construction: hnsw?.expansion_add ?? 128,
        },
      },
    };
  }
  return {
    settings: {
      index: {
        number_of_shards: o.shards,
        number_of_replicas: o.replicas,
        refresh_interval: '-1',
        knn: m.dense !== null,
        similarity: { default: { type: 'BM25', k1: m.bm25.k1, b: m.bm25.b } },
      },
    },
    // vectors are kept by the k-NN index itself; leaving them out of _source keeps hits small
    mappings: { dynamic: 'strict', _source: { excludes: ['vector'] }, properties },
  };
}

/** The engine document of one chunk (and its vector). */
export function chunkDocument(c: ChunkRecord, vector: Float32Array | undefined): Record<string, unknown> {
  const meta = c.metadata;
  const doc: Record<string, unknown> = {
    num: c.num,
    id: c.id,
    doc_id: c.docId,
    position: c.position,
    title: c.title,
    contents: c.contents,
    body_start: c.contents.length - c.text.length,
    n_tokens: c.nTokens,
  };
  if (meta) {
    doc['metadata'] = meta;
    const source = filterText(meta['source']);
    const category = filterText(meta['category']);
    if (source !== undefined) doc['source'] = source;
    if (category !== undefined) doc['category'] = category;
    if (source !== undefined) doc['source_label'] = String(meta['source']);
    if (category !== undefined) doc['category_label'] = String(meta['category']);
    if (typeof meta['published_at'] === 'string') doc['published_at'] = meta['published_at'];
  }
  if (vector) doc['vector'] = unitVector(vector);
  return doc;
}

/**
 * The vector scaled to length 1, as a plain array: with unit vectors the
 * engine's inner product is the cosine that local dense search ranks by.
 */
export function unitVector(v: Float32Array): number[] {
  let sq = 0;
  for (const x of v) sq += x * x;
  const norm = Math.sqrt(sq) || 1;
  return Array.from(v, (x) => x / norm);
}

/** A metadata value as local filters compare it: SQLite's lower() of its text. */
function filterText(v: unknown): string | undefined {
  if (typeof v === 'string') return v.toLowerCase();
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** The fields a hit carries back (everything but the vector). */
export const HIT_FIELDS = [
  'num',
  'id',
  'doc_id',
  'position',
  'title',
  'contents',
  'body_start',
  'n_tokens',
  'metadata',
];

/** A hit's _source: the chunk's stored fields with its metadata as an object. */
export type ChunkSource = StoredChunk<Metadata>;

export function toChunkRecord(s: ChunkSource): ChunkRecord {
  return chunkRecord(s, s.metadata);
}

/** The filter as engine clauses, applied inside both arms (the same rules as the SQLite filter). */
export function filterClauses(f: ParsedFilter | undefined): Array<Record<string, unknown>> {
  if (!f) return [];
  const s = f.spec;
  const out: Array<Record<string, unknown>> = [];
  if (s.source) out.push({ terms: { source: s.source } });
  if (s.category) out.push({ terms: { category: s.category } });
  if (s.doc_id) out.push({ terms: { doc_id: s.doc_id } });
  const range: Record<string, string> = {};
  if (s.published_after) range['gte'] = s.published_after;
  if (s.published_before) range[s.beforeExclusive ? 'lt' : 'lte'] = s.published_before;
  if (Object.keys(range).length > 0) out.push({ range: { published_at: range } });
  return out;
}

/**
 * The k-NN plugin's inner-product score back to the dot product of the unit
 * vectors, the cosine that local dense searches report: the plugin maps
 * d ≥ 0 to 1 + d and d < 0 to 1 / (1 − d).
 */
export function dotFromScore(score: number): number {
  return score >= 1 ? score - 1 : 1 - 1 / score;
}

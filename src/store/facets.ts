import type { SqliteDatabase } from './sqlite.js';

/** What a corpus's metadata filters can select. */
export interface Facets {
  sources: Array<{ value: string; documents: number }>;
  categories: Array<{ value: string; documents: number }>;
  published: { first: string; last: string } | null;
}

export const NO_FACETS: Facets = { sources: [], categories: [], published: null };

/** How many values of each kind are kept: the most common first. */
export const FACET_LIMIT = 50;

/**
 * The most common sources and categories (document counts) and the range of
 * publication dates, from one scan of the documents table. Builds run it once
 * and keep the answer in `meta`, because at wiki-18's 21M documents the scan
 * takes tens of seconds.
 */
export function computeFacets(db: SqliteDatabase, limit = FACET_LIMIT): Facets {
  const top = (key: string): Array<{ value: string; documents: number }> =>
    db
      .prepare(
        `SELECT json_extract(metadata, '$.${key}') AS value, count(*) AS documents FROM documents
         WHERE metadata IS NOT NULL AND value IS NOT NULL AND value != '' GROUP BY value ORDER BY documents DESC, value LIMIT ?`,
      )
      .all(limit) as Array<{ value: string; documents: number }>;
  const dates = db
    .prepare(
      `SELECT min(d) AS first, max(d) AS last FROM (SELECT date(json_extract(metadata, '$.published_at')) AS d
       FROM documents WHERE metadata IS NOT NULL) WHERE d IS NOT NULL`,
    )
    .get() as { first: string | null; last: string | null };
  return {
    sources: top('source'),
    categories: top('category'),
    published: dates.first && dates.last ? { first: dates.first, last: dates.last } : null,
  };
}

import type { ChunkRecord } from '../../store/chunk-store.js';
import type { SearchHit } from '../../search/types.js';

/**
 * "Doc 1 [id 5#0] (Title: …; Source: TechCrunch; Category: technology;
 * 2023-10-05) text": the passage format Search-R1-style agents are trained on
 * ("Doc N (Title: …) text"), with the chunk id an agent passes to `fetch`,
 * because many hosts show the model only the text blocks, and, where the
 * corpus has them, the source, category and date the search tool's
 * description tells the model it can filter on: a question that names a
 * publisher and a month is otherwise answered blind.
 */
export function formatHit(hit: SearchHit): string {
  // a search of several corpora: fetch needs the corpus beside the id
  const where = hit.corpus !== undefined ? ` in ${hit.corpus}` : '';
  return `Doc ${hit.rank} [id ${hit.id}${where}] (${heading(hit.title, hit.metadata)}) ${hit.text}`;
}

export function formatChunk(c: ChunkRecord): string {
  return `[${c.id}] (${heading(c.title, c.metadata)}) ${c.text}`;
}

/** The part in parentheses: the title, then the facts a filter can select, those the passage has. */
function heading(title: string, metadata: Record<string, unknown> | undefined): string {
  const parts = [`Title: ${title}`];
  const source = text(metadata?.['source']);
  const category = text(metadata?.['category']);
  const date = text(metadata?.['published_at']);
  if (source) parts.push(`Source: ${source}`);
  if (category) parts.push(`Category: ${category}`);
  // ISO timestamps are shown as their day: what published_after and published_before compare
  if (date) parts.push(/^\d{4}-\d{2}-\d{2}T/.test(date) ? date.slice(0, 10) : date);
  // a PDF's chunk: the pages a citation needs
  const pages = text(metadata?.['pages']);
  if (pages) parts.push(`${pages.includes('-') ? 'pages' : 'page'} ${pages}`);
  return parts.join('; ');
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

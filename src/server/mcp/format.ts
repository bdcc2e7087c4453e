import type { ChunkRecord } from '../../store/chunk-store.js';
import type { SearchHit } from '../../search/types.js';

/**
 * "Doc 1 [id 5#0] (Title: …) text": the passage format Search-R1-style agents
 * are trained on ("Doc N (Title: …) text"), with the chunk id an agent passes
 * to `fetch`, because many hosts show the model only the text blocks.
 */
export function formatHit(hit: SearchHit): string {
  return `Doc ${hit.rank} [id ${hit.id}] (Title: ${hit.title}) ${hit.text}`;
}

export function formatChunk(c: ChunkRecord): string {
  return `[${c.id}] (Title: ${c.title}) ${c.text}`;
}

import type { ChunkRecord } from '../../store/chunk-store.js';
import type { SearchHit } from '../../search/types.js';

/** "Doc 1 (Title: …) text": the passage format Search-R1-style agents are trained on. */
export function formatHit(hit: SearchHit): string {
  return `Doc ${hit.rank} (Title: ${hit.title}) ${hit.text}`;
}

export function formatChunk(c: ChunkRecord): string {
  return `[${c.id}] (Title: ${c.title}) ${c.text}`;
}

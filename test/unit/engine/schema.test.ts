import { describe, expect, it } from 'vitest';
import {
  chunkDocument,
  dotFromScore,
  filterClauses,
  toChunkRecord,
  unitVector,
} from '../../../src/engine/opensearch/schema.js';
import { parseFilter } from '../../../src/search/filters.js';
import type { ChunkRecord } from '../../../src/store/chunk-store.js';

describe('OpenSearch layout', () => {
  it('maps the k-NN inner-product score back to the dot product on both sides of zero', () => {
    for (const d of [-0.9, -0.25, 0, 0.3, 0.999]) {
      const score = d >= 0 ? 1 + d : 1 / (1 - d); // the plugin's own transform
      expect(dotFromScore(score)).toBeCloseTo(d, 12);
    }
  });

  it('pushes unit vectors, so inner product ranks as cosine', () => {
    const v = unitVector(Float32Array.from([3, 4]));
    expect(v[0]).toBeCloseTo(0.6, 6);
    expect(v[1]).toBeCloseTo(0.8, 6);
  });

  it('round-trips a chunk through its engine document', () => {
    const c: ChunkRecord = {
      num: 7,
      id: 'd1#2',
      docId: 'd1',
      position: 2,
      title: 'T',
      contents: '"T"\nbody text',
      text: 'body text',
      nTokens: 3,
      metadata: { source: 'TechCrunch', category: 'Tech', published_at: '2023-10-01T00:00:00Z' },
    };
    const doc = chunkDocument(c, Float32Array.from([0, 2]));
    expect(doc).toMatchObject({ source: 'techcrunch', category: 'tech', published_at: '2023-10-01T00:00:00Z' });
    expect(doc['vector']).toEqual([0, 1]);
    const stored = Object.fromEntries(
      Object.entries(doc).filter(([k]) => !['vector', 'source', 'category', 'published_at'].includes(k)),
    );
    expect(toChunkRecord(stored as unknown as Parameters<typeof toChunkRecord>[0])).toEqual(c);
  });

  it('turns a filter into the same clauses the SQLite filter applies', () => {
    const f = parseFilter({
      source: ['Fortune', 'BBC'],
      published_after: '2023-06-01',
      published_before: '2023-06-30',
    });
    expect(filterClauses(f)).toEqual([
      { terms: { source: ['bbc', 'fortune'] } },
      { range: { published_at: { gte: '2023-06-01T00:00:00.000Z', lt: '2023-07-01T00:00:00.000Z' } } },
    ]);
    expect(filterClauses(undefined)).toEqual([]);
  });
});

/**
 * The IVF index's settings by corpus size, and when a build takes it over HNSW. Figures measured
 * for them are in BENCHMARKS.md ("wiki-18 at full size"); help text is generated from here.
 */
export interface IvfSettings {
  /** Lists (k-means clusters) the vectors are split into. */
  lists: number;
  /** Lists scanned a query. */
  probes: number;
  /** Candidates, by estimated score, re-scored exactly from the stored vectors. */
  rescore: number;
}

/** Above this many chunks `auto` builds an IVF index: an HNSW graph there takes tens of GB and many hours. */
export const IVF_ABOVE = 4_000_000;

/** 4·√n lists, rounded to a power of two (FAISS's guidance is 4·√n to 16·√n). */
export function defaultLists(chunks: number): number {
  const raw = 4 * Math.sqrt(Math.max(1, chunks));
  return Math.max(16, Math.min(1 << 16, 2 ** Math.round(Math.log2(raw))));
}

export function ivfDefaults(chunks: number): IvfSettings {
  const lists = defaultLists(chunks);
  return { lists, probes: Math.max(16, Math.round(lists / 128)), rescore: 500 };
}

export function annKindFor(kind: 'auto' | 'hnsw' | 'ivf', chunks: number): 'hnsw' | 'ivf' {
  if (kind !== 'auto') return kind;
  return chunks > IVF_ABOVE ? 'ivf' : 'hnsw';
}

export const IVF_DEFAULTS_HELP = {
  lists: '4·√chunks rounded to a power of two',
  probes: 'lists ÷ 128, at least 16',
  rescore: '500',
};

import { RetrieverError } from '../errors.js';
import type { ChunkRecord } from '../store/chunk-store.js';
import type { ServedCorpus } from './served-corpus.js';
import type { Retriever } from './retriever.js';
import type { AnswerMeter } from './types.js';

export interface FetchRequest {
  ids?: string[];
  id?: string;
  doc_id?: string;
  /** With ids/id: also return this many neighbouring chunks on each side. With doc_id: around `position`. */
  around?: number;
  position?: number;
  corpus?: string;
}

export interface FetchResult {
  corpus: string;
  chunks: ChunkRecord[];
  missing: string[];
  truncated: boolean;
}

export const FETCH_LIMITS = { maxIds: 100, maxAround: 20, maxChunks: 200 } as const;

/**
 * Full chunk texts by chunk id, or a document's chunks by doc id. Ids are
 * only ever bound as SQL parameters and looked up in the served corpora.
 */
export async function fetchChunks(retriever: Retriever, req: FetchRequest, meter?: AnswerMeter): Promise<FetchResult> {
  const res = await readChunks(retriever, req);
  if (meter) {
    let bytes = 0;
    for (const c of res.chunks) bytes += c.contents.length + c.title.length;
    meter(bytes, res.chunks.length);
  }
  return res;
}

async function readChunks(retriever: Retriever, req: FetchRequest): Promise<FetchResult> {
  const given = [req.ids !== undefined, req.id !== undefined, req.doc_id !== undefined].filter(Boolean).length;
  if (given !== 1) {
    throw new RetrieverError('BAD_INPUT', 'fetch needs exactly one of "ids" (list), "id" or "doc_id"');
  }
  const around = req.around ?? 0;
  if (!Number.isInteger(around) || around < 0 || around > FETCH_LIMITS.maxAround) {
    throw new RetrieverError('BAD_INPUT', `around must be an integer from 0 to ${FETCH_LIMITS.maxAround}`);
  }
  const candidates = req.corpus !== undefined ? [retriever.corpus(req.corpus)] : retriever.corpora;
  const chunks: ChunkRecord[] = [];
  const missing: string[] = [];
  const seen = new Set<string>();
  let corpusName = candidates[0]?.name ?? '';
  const push = (c: ChunkRecord): void => {
    if (seen.has(c.id) || chunks.length >= FETCH_LIMITS.maxChunks) return;
    seen.add(c.id);
    chunks.push(c);
  };

  if (req.doc_id !== undefined) {
    const docId = req.doc_id;
    for (const corpus of candidates) {
      const source = reader(corpus);
      const found =
        req.position !== undefined
          ? await source.getDocumentRange(docId, req.position - around, req.position + around)
          : await source.getDocumentChunks(docId, FETCH_LIMITS.maxChunks + 1);
      if (found.length === 0) continue;
      corpusName = corpus.name;
      for (const c of found) push(c);
      return { corpus: corpusName, chunks, missing, truncated: found.length > FETCH_LIMITS.maxChunks };
    }
    return { corpus: corpusName, chunks, missing: [docId], truncated: false };
  }

  const ids = req.ids ?? [req.id as string];
  if (ids.length === 0 || ids.length > FETCH_LIMITS.maxIds) {
    throw new RetrieverError('BAD_INPUT', `ids must hold 1 to ${FETCH_LIMITS.maxIds} chunk ids`);
  }
  let truncated = false;
  for (const id of ids) {
    let hit: ChunkRecord | undefined;
    for (const corpus of candidates) {
      const source = reader(corpus);
      hit = (await source.getChunksById([id]))[0];
      if (!hit) continue;
      corpusName = corpus.name;
      if (around > 0) {
        for (const c of await source.getDocumentRange(hit.docId, hit.position - around, hit.position + around)) push(c);
      } else push(hit);
      break;
    }
    if (!hit) missing.push(id);
    if (chunks.length >= FETCH_LIMITS.maxChunks) truncated = true;
  }
  return { corpus: corpusName, chunks, missing, truncated };
}

type ChunkReader = Pick<
  Extract<ServedCorpus, { kind: 'engine' }>,
  'getChunksById' | 'getDocumentRange' | 'getDocumentChunks'
>;

/** The chunk lookups of a corpus: its engine's, or its SQLite store's. */
function reader(c: ServedCorpus): ChunkReader {
  if (c.kind === 'engine') return c;
  const store = c.store;
  return {
    getChunksById: (ids) =>
      Promise.resolve(ids.map((id) => store.getChunkById(id)).filter((r): r is ChunkRecord => r !== undefined)),
    getDocumentRange: (docId, from, to) => Promise.resolve(store.getDocumentRange(docId, from, to)),
    getDocumentChunks: (docId, limit) => Promise.resolve(store.getDocumentChunks(docId, limit)),
  };
}

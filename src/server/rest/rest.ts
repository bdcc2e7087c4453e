import { describeValue, RetrieverError } from '../../errors.js';
import type { Retriever } from '../../search/retriever.js';
import { SEARCH_MODES, type SearchHit, type SearchMode, type SearchResult } from '../../search/types.js';
import { boolLike, intLike, rejectUnknownFields } from '../field-names.js';
import type { Guard } from '../mcp/tool-context.js';
import { answerMeter } from '../answer-size.js';

/**
 * REST endpoints compatible with the Python retrieval servers RL trainers
 * already call, so they can switch servers without code changes:
 *   POST /retrieve      Search-R1 / verl:  {queries, topk, return_scores}
 *   POST /search        FlashRAG serving:  {query, top_n, return_score}
 *   POST /batch_search  FlashRAG serving:  {query: [...], top_n, return_score}
 * All accept optional `corpus`, `mode` and `filter` (metadata filter, see filters.ts).
 */
export interface RestContext {
  retriever: Retriever;
  guard: Guard;
  maxBatchQueries: number;
}

type Doc = { id: string; contents: string };

function doc(h: SearchHit): Doc {
  return { id: h.id, contents: h.contents };
}

function asObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new RetrieverError('BAD_INPUT', 'request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

function optInt(o: Record<string, unknown>, key: string): number | undefined {
  const v = intLike(o[key]);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v))
    throw new RetrieverError('BAD_INPUT', `"${key}" must be an integer, got ${describeValue(v)}`);
  return v;
}

function optBool(o: Record<string, unknown>, key: string, dflt: boolean): boolean {
  const v = boolLike(o[key]);
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'boolean')
    throw new RetrieverError('BAD_INPUT', `"${key}" must be true or false, got ${describeValue(v)}`);
  return v;
}

function optMode(o: Record<string, unknown>): SearchMode | undefined {
  const v = o['mode'];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || !(SEARCH_MODES as readonly string[]).includes(v)) {
    throw new RetrieverError('BAD_INPUT', `"mode" must be one of ${SEARCH_MODES.join(', ')}, got ${describeValue(v)}`);
  }
  return v as SearchMode;
}

function optCorpus(o: Record<string, unknown>): string | undefined {
  const v = o['corpus'];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new RetrieverError('BAD_INPUT', '"corpus" must be a string');
  return v;
}

function queryList(v: unknown, key: string, max: number): string[] {
  if (!Array.isArray(v)) throw new RetrieverError('BAD_INPUT', `"${key}" must be a list of strings`);
  if (v.length === 0) throw new RetrieverError('BAD_INPUT', `"${key}" is empty: send at least one query`);
  if (v.length > max)
    throw new RetrieverError(
      'BAD_INPUT',
      `"${key}" holds ${v.length} queries; the limit is ${max} per request: split the batch`,
    );
  v.forEach((q, i) => {
    if (typeof q !== 'string') throw new RetrieverError('BAD_INPUT', `"${key}"[${i}] must be a string`);
  });
  return v as string[];
}

/**
 * `query_vectors`, when sent: a list of up to `max` lists of numbers (the retriever checks each
 * against the index's dimension).
 */
function vectorList(v: unknown, max: number): number[][] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.length === 0 || !v.every((x) => Array.isArray(x)))
    throw new RetrieverError('BAD_INPUT', '"query_vectors" must be a list of vectors, each a list of numbers');
  if (v.length > max)
    throw new RetrieverError(
      'BAD_INPUT',
      `"query_vectors" holds ${v.length} vectors; the limit is ${max} per request: split the batch`,
    );
  return v as number[][];
}

/** Runs the queries with the request's own name for its top-k field ("topk", "top_n") in errors. */
async function run(
  ctx: RestContext,
  o: Record<string, unknown>,
  queries: string[],
  topKName: string,
  vectors?: number[][],
) {
  const topK = optInt(o, topKName);
  const mode = optMode(o);
  const corpus = optCorpus(o);
  return ctx.guard(() =>
    ctx.retriever.searchMany(queries, {
      topK,
      mode,
      corpus,
      filter: o['filter'],
      topKName,
      meter: answerMeter('rest'),
      ...(vectors ? { vectors } : {}),
    }),
  );
}

/**
 * A JSON answer written one item a turn: `before`, the items joined by
 * commas, `after`. A 256-query batch of long passages serialises to
 * megabytes, and one JSON.stringify of it held the event loop for tens of
 * milliseconds (RELIABILITY.md "Event loop").
 */
export class JsonList {
  constructor(
    readonly before: string,
    readonly items: readonly unknown[],
    readonly after: string,
  ) {}
}

/** Batches of more queries than this are written as a JsonList. */
const STREAM_ABOVE_QUERIES = 4;

/**
 * Search-R1 and verl send {"queries": [...]}; SkyRL's search tool sends one
 * {"query": "..."} to the same route and reads the same {"result": [[...]]}.
 */
function retrieveQueries(o: Record<string, unknown>, max: number): string[] {
  if (o['queries'] === undefined && o['query'] !== undefined) {
    if (typeof o['query'] !== 'string')
      throw new RetrieverError('BAD_INPUT', '"query" must be a string (send a list as "queries")');
    return [o['query']];
  }
  if (o['query'] !== undefined)
    throw new RetrieverError('BAD_INPUT', 'send either "queries" (a list) or "query" (one string), not both');
  return queryList(o['queries'], 'queries', max);
}

/** The fields each route takes (field-names.ts: anything else is a 400 naming the nearest). */
const RETRIEVE_FIELDS = [
  'queries',
  'query',
  'query_vectors',
  'topk',
  'return_scores',
  'corpus',
  'mode',
  'filter',
] as const;
const FLASH_FIELDS = ['query', 'top_n', 'return_score', 'corpus', 'mode', 'filter'] as const;

/**
 * What a score means: RRF for hybrid (a fused rank score, about 1/(k + rank) per arm, not a
 * similarity), BM25 for bm25, cosine for dense. Sent as `score_kind` beside /retrieve's result and
 * in the X-Score-Kind header of every REST answer.
 */
export function scoreKind(mode: SearchMode): 'rrf' | 'bm25' | 'cosine' {
  return mode === 'hybrid' ? 'rrf' : mode === 'bm25' ? 'bm25' : 'cosine';
}

/** A REST answer and what its scores are. */
export interface RestAnswer {
  body: unknown;
  scoreKind: 'rrf' | 'bm25' | 'cosine';
}

export async function handleRetrieve(ctx: RestContext, body: unknown): Promise<RestAnswer> {
  const o = asObject(body);
  rejectUnknownFields('/retrieve', o, RETRIEVE_FIELDS);
  const vectors = vectorList(o['query_vectors'], ctx.maxBatchQueries);
  // with query vectors the text is optional: it adds BM25 (hybrid); alone, the search is dense
  const queries =
    vectors && o['queries'] === undefined && o['query'] === undefined ? [] : retrieveQueries(o, ctx.maxBatchQueries);
  const withScores = optBool(o, 'return_scores', false);
  const results = await run(ctx, o, queries, 'topk', vectors);
  const kind = scoreKind((results[0] as SearchResult).mode);
  const lists = results.map((r) => r.results.map((h) => (withScores ? { document: doc(h), score: h.score } : doc(h))));
  const after = withScores ? `],"score_kind":"${kind}"}` : ']}';
  return {
    body:
      lists.length > STREAM_ABOVE_QUERIES
        ? new JsonList('{"result":[', lists, after)
        : { result: lists, ...(withScores ? { score_kind: kind } : {}) },
    scoreKind: kind,
  };
}

export async function handleFlashSearch(ctx: RestContext, body: unknown): Promise<RestAnswer> {
  const o = asObject(body);
  rejectUnknownFields('/search', o, FLASH_FIELDS);
  if (typeof o['query'] !== 'string')
    throw new RetrieverError('BAD_INPUT', '"query" must be a string (use /batch_search for a list)');
  const withScores = optBool(o, 'return_score', false);
  const [r] = await run(ctx, o, [o['query']], 'top_n');
  const { results: hits, mode } = r as SearchResult;
  return {
    body: withScores ? [hits.map(doc), hits.map((h) => h.score)] : hits.map(doc),
    scoreKind: scoreKind(mode),
  };
}

export async function handleFlashBatchSearch(ctx: RestContext, body: unknown): Promise<RestAnswer> {
  const o = asObject(body);
  rejectUnknownFields('/batch_search', o, FLASH_FIELDS);
  const queries = queryList(o['query'], 'query', ctx.maxBatchQueries);
  const withScores = optBool(o, 'return_score', false);
  const results = await run(ctx, o, queries, 'top_n');
  const docs = results.map((r) => r.results.map(doc));
  return {
    body: withScores ? [docs, results.map((r) => r.results.map((h) => h.score))] : docs,
    scoreKind: scoreKind((results[0] as SearchResult).mode),
  };
}

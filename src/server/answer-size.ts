import { AsyncLocalStorage } from 'node:async_hooks';
import { RetrieverError } from '../errors.js';
import { FETCH_LIMITS } from '../search/fetch.js';
import type { Retriever } from '../search/retriever.js';
import type { AnswerMeter } from '../search/types.js';
import type { AnswerBudget, Lease } from './admission.js';
import type { RetrieverSlot } from './mcp/retriever-slot.js';

/** Bytes a hit holds beyond its passage: ids, title, scores, metadata. */
const PER_HIT_BYTES = 256;

/**
 * How many times a hit's bytes an answer holds at its peak, measured on
 * 2WikiMultiHopQA (256 queries × top 100, 444-byte passages): REST writes its
 * JSON a list at a time, so the hits as objects and one piece of JSON are
 * about all (six such answers at once fit a 256 MB heap); an MCP answer holds
 * the text blocks beside the structured copy, the SDK's validation of it and
 * the whole serialised message, about 120 MB each (two at once exhausted the
 * same heap).
 */
const PEAK_FACTOR = { rest: 1.5, mcp: 7 } as const;

/** A passage's size when the manifest does not say: a 500-token chunk of English. */
const FALLBACK_PASSAGE_BYTES = 4096;

/**
 * Estimates, before any work, the peak memory of the answer a request will
 * get: its hits (queries × top_k, or the passages `fetch` may return) times
 * a passage's average stored size (the chunk store's bytes over its chunks,
 * from the manifest). An overestimate costs concurrency; an underestimate
 * lets a heap fill, so the factors are generous.
 */
export class AnswerSizer {
  constructor(private readonly slot: RetrieverSlot) {}

  /** The answer to an MCP message, bytes: tools/call of search, batch_search and fetch; 0 for anything else. */
  mcp(message: unknown): number {
    const params = field(message, 'params');
    if (field(message, 'method') !== 'tools/call') return 0;
    const args = field(params, 'arguments');
    const corpus = stringOr(field(args, 'corpus'));
    const topK = (): number => this.topK(field(args, 'top_k'), corpus);
    switch (field(params, 'name')) {
      case 'search':
        return this.bytes(topK(), corpus, 'mcp');
      case 'batch_search':
        return this.bytes(count(field(args, 'queries')) * topK(), corpus, 'mcp');
      case 'fetch':
        return this.bytes(FETCH_LIMITS.maxChunks, corpus, 'mcp');
      default:
        return 0;
    }
  }

  /** The answer to a REST search route's body, bytes. */
  rest(path: string, body: unknown): number {
    const corpus = stringOr(field(body, 'corpus'));
    if (path === '/retrieve') {
      const queries = field(body, 'queries') ?? field(body, 'query_vectors');
      const n = queries === undefined && field(body, 'query') !== undefined ? 1 : count(queries);
      return this.bytes(n * this.topK(field(body, 'topk'), corpus), corpus, 'rest');
    }
    const queries = field(body, 'query');
    const n = path === '/batch_search' ? count(queries) : 1;
    return this.bytes(n * this.topK(field(body, 'top_n'), corpus), corpus, 'rest');
  }

  private topK(asked: unknown, corpus: string | undefined): number {
    const r = this.slot.current();
    const k = typeof asked === 'number' ? asked : typeof asked === 'string' ? Number(asked) : NaN;
    const fallback = r ? r.defaultTopK(corpus) : this.slot.opts.topK;
    // out of bounds is refused by the search itself; the estimate only needs an upper bound
    return Number.isFinite(k) ? Math.max(1, Math.min(k, this.slot.opts.maxTopK)) : fallback;
  }

  private bytes(hits: number, corpus: string | undefined, kind: keyof typeof PEAK_FACTOR): number {
    return hits * (passageBytes(this.slot.current(), corpus) + PER_HIT_BYTES) * PEAK_FACTOR[kind];
  }
}

/**
 * A corpus's average passage, bytes: the smaller of its input and its chunk
 * store over its chunks (the store also holds the term dictionary, the input
 * metadata a passage does not carry).
 */
function passageBytes(r: Retriever | undefined, name: string | undefined): number {
  if (!r) return FALLBACK_PASSAGE_BYTES;
  let corpus;
  try {
    corpus = r.corpus(name);
  } catch {
    return FALLBACK_PASSAGE_BYTES; // an unknown corpus is refused by the search itself
  }
  const m = corpus.manifest;
  const sizes = [m.files?.['chunks.sqlite']?.bytes, m.corpus.source?.bytes].filter((b): b is number => (b ?? 0) > 0);
  return sizes.length > 0 && m.corpus.chunks > 0
    ? Math.ceil(Math.min(...sizes) / m.corpus.chunks)
    : FALLBACK_PASSAGE_BYTES;
}

function field(v: unknown, key: string): unknown {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>)[key] : undefined;
}

function count(v: unknown): number {
  return Array.isArray(v) ? v.length : 1;
}

function stringOr(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** The answer budget and the estimates it admits by, as a transport uses them. */
export interface AnswerGate {
  readonly budget: AnswerBudget;
  readonly sizer: AnswerSizer;
}

/** Why an answer of about `bytes` is refused now, for its 503. */
export function answerRefusal(budget: AnswerBudget, bytes: number): string {
  return (
    `the answers in flight hold ${mib(budget.heldBytes)} of this server's ${mib(budget.limitBytes)} answer budget ` +
    `and this one needs about ${mib(bytes)}: retry shortly, or ask for fewer queries or a smaller top_k ` +
    '(--max-answer-mb sets the budget)'
  );
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(bytes < 10 * 2 ** 20 ? 1 : 0)} MiB`;
}

/**
 * The answer lease of the request being handled, for the work it starts: each transport runs a
 * message's dispatch inside `answerLeases.run`, so a tool handler deep in the SDK finds the lease
 * its request was admitted with, whichever transport and era it came by.
 */
export const answerLeases = new AsyncLocalStorage<Lease>();

/**
 * What counts an answer's passages against its lease as they are read, for the request being
 * handled (undefined outside one): the peak its answer will take is their bytes, plus a hit's
 * fields, times the transport's factor. It throws OVERLOADED (a 503, or an error result) when
 * the budget has no room, before the answer is built.
 */
export function answerMeter(kind: keyof typeof PEAK_FACTOR): AnswerMeter | undefined {
  const lease = answerLeases.getStore();
  if (!lease) return undefined;
  return (passageBytes, hits) => {
    const bytes = (passageBytes + hits * PER_HIT_BYTES) * PEAK_FACTOR[kind];
    if (lease.account(bytes)) return;
    throw new RetrieverError(
      'OVERLOADED',
      `the passages found weigh ${mib(passageBytes)}, and with the answers in flight (${mib(lease.budget.heldBytes)} ` +
        `of this server's ${mib(lease.budget.limitBytes)} answer budget) there is no room to send them: retry shortly, ` +
        'or ask for fewer queries or a smaller top_k (--max-answer-mb sets the budget)',
    );
  };
}

import type { McpServer } from '@modelcontextprotocol/server';
import { describeError, isRetrieverError } from '../../errors.js';
import type { Logger } from '../../util/log.js';
import type { RetrieverSlot } from './retriever-slot.js';

/** Runs retrieval work under admission control and a deadline. */
export type Guard = <T>(work: () => Promise<T>) => Promise<T>;

/**
 * `guard`, and a served file found damaged by a request (INDEX_CORRUPT: a
 * page of the store, a postings list) withdraws the corpora as a failed
 * checksum does: /ready answers 503 and every search names the file and the
 * rebuild command, instead of /ready saying 200 while searches fail.
 */
export function withdrawOnDamage(slot: RetrieverSlot, log: Logger, guard: Guard): Guard {
  return async (work) => {
    try {
      return await guard(work);
    } catch (err) {
      if (isRetrieverError(err, 'INDEX_CORRUPT') && slot.ready) {
        log.error(`${describeError(err)}; no longer answering searches`);
        slot.withdraw(err);
      }
      throw err;
    }
  };
}

const built = new WeakMap<object, Map<string, unknown>>();

/**
 * A tool's zod schemas, built once per slot and key: stateless serving makes
 * an McpServer a request, and building and converting the schemas anew was
 * 28% of the server's CPU in the verl pattern (bench mcp-eras). The key
 * names what a schema depends on (the dense model once it is known).
 */
export function schemasOnce<T>(ctx: ToolContext, key: string, build: () => T): T {
  let m = built.get(ctx.slot);
  if (!m) built.set(ctx.slot, (m = new Map()));
  if (!m.has(key)) m.set(key, build());
  return m.get(key) as T;
}

export interface ToolContext {
  server: McpServer;
  /** The retriever, once its corpora are open (a first run builds them in the background). */
  slot: RetrieverSlot;
  maxBatchQueries: number;
  /** Whether search results end with a `resource_link` per hit. */
  resourceLinks: boolean;
  guard: Guard;
}

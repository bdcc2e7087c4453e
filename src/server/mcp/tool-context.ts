import type { McpServer } from '@modelcontextprotocol/server';
import type { RetrieverSlot } from './retriever-slot.js';

/** Runs retrieval work under admission control and a deadline. */
export type Guard = <T>(work: () => Promise<T>) => Promise<T>;

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

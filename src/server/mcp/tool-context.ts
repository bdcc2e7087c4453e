import type { McpServer } from '@modelcontextprotocol/server';
import type { RetrieverSlot } from './retriever-slot.js';

/** Runs retrieval work under admission control and a deadline. */
export type Guard = <T>(work: () => Promise<T>) => Promise<T>;

export interface ToolContext {
  server: McpServer;
  /** The retriever, once its corpora are open (a first run builds them in the background). */
  slot: RetrieverSlot;
  maxBatchQueries: number;
  /** Whether search results end with a `resource_link` per hit. */
  resourceLinks: boolean;
  guard: Guard;
}

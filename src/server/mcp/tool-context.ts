import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Retriever } from '../../search/retriever.js';

/** Runs retrieval work under admission control and a deadline. */
export type Guard = <T>(work: () => Promise<T>) => Promise<T>;

export interface ToolContext {
  server: McpServer;
  retriever: Retriever;
  maxBatchQueries: number;
  guard: Guard;
}

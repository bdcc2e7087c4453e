import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Retriever } from '../search/retriever.js';

export interface ToolContext {
  server: McpServer;
  retriever: Retriever;
  maxBatchQueries: number;
}

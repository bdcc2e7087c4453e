import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Retriever } from '../../search/retriever.js';
import { TOOL_VERSION } from '../../version.js';
import { registerBatchSearch } from './tools/batch-search.js';
import { registerFetch } from './tools/fetch.js';
import { registerListCorpora } from './tools/list-corpora.js';
import { registerSearch } from './tools/search.js';
import type { Guard } from './tool-context.js';

export interface ServerOptions {
  retriever: Retriever;
  maxBatchQueries: number;
  /** Admission control and deadlines around retrieval; none by default. */
  guard?: Guard;
}

/**
 * A fresh MCP server bound to an already-open retriever. Cheap enough to make
 * one per stateless HTTP request; the retriever (indexes, encoder) is shared.
 */
export function createServer(opts: ServerOptions): { server: McpServer; close: () => Promise<void> } {
  const server = new McpServer(
    { name: 'retriever-mcp', version: TOOL_VERSION },
    {
      instructions:
        'Search tools over local document corpora. Use `search` for one question, `batch_search` for several, ' +
        '`fetch` to read a passage in full or its neighbours, `list_corpora` to see what is indexed.',
    },
  );
  const ctx = {
    server,
    retriever: opts.retriever,
    maxBatchQueries: opts.maxBatchQueries,
    guard: opts.guard ?? (<T>(work: () => Promise<T>) => work()),
  };
  registerSearch(ctx);
  registerBatchSearch(ctx);
  registerFetch(ctx);
  registerListCorpora(ctx);
  return { server, close: () => server.close() };
}

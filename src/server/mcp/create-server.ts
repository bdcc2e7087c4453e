import { McpServer } from '@modelcontextprotocol/server';
import type { Retriever } from '../../search/retriever.js';
import { RetrieverSlot } from './retriever-slot.js';
import { TOOL_VERSION } from '../../version.js';
import { registerBatchSearch } from './tools/batch-search.js';
import { registerFetch } from './tools/fetch.js';
import { registerListCorpora } from './tools/list-corpora.js';
import { registerSearch } from './tools/search.js';
import { registerChunkResource } from './resources/chunks.js';
import type { Guard } from './tool-context.js';

/** How long a 2026-07-28 client may reuse the tool list and server/discover: the corpora are fixed while serving. */
const LIST_HINT = { ttlMs: 300_000, cacheScope: 'private' as const };

function slotReady(r: Retriever | RetrieverSlot): boolean {
  return !(r instanceof RetrieverSlot) || r.ready;
}

export interface ServerOptions {
  /** An open retriever, or a slot a background first-run build fills. */
  retriever: Retriever | RetrieverSlot;
  maxBatchQueries: number;
  /** A `resource_link` per hit after the text blocks (`--resource-links`), for hosts that open resources. */
  resourceLinks?: boolean;
  /** Admission control and deadlines around retrieval; none by default. */
  guard?: Guard;
}

/**
 * A fresh MCP server bound to a retriever (or the slot one will fill). Cheap enough to make
 * one per stateless HTTP request; the retriever (indexes, encoder) is shared.
 */
export function createServer(opts: ServerOptions): { server: McpServer; close: () => Promise<void> } {
  const server = new McpServer(
    { name: 'retriever-mcp', version: TOOL_VERSION },
    {
      instructions:
        'Search tools over local document corpora. Use `search` for one question, `batch_search` for several, ' +
        '`fetch` to read a passage in full or its neighbours, `list_corpora` to see what is indexed.',
      // 2026-07-28 clients may reuse these: the tools only change when a first-run build ends
      cacheHints: slotReady(opts.retriever)
        ? { 'tools/list': LIST_HINT, 'resources/templates/list': LIST_HINT, 'server/discover': LIST_HINT }
        : {},
    },
  );
  const ctx = {
    server,
    slot: opts.retriever instanceof RetrieverSlot ? opts.retriever : RetrieverSlot.of(opts.retriever),
    maxBatchQueries: opts.maxBatchQueries,
    resourceLinks: opts.resourceLinks ?? false,
    guard: opts.guard ?? (<T>(work: () => Promise<T>) => work()),
  };
  registerSearch(ctx);
  registerBatchSearch(ctx);
  registerFetch(ctx);
  registerListCorpora(ctx);
  registerChunkResource(ctx);
  return { server, close: () => server.close() };
}

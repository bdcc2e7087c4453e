import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
} from '@modelcontextprotocol/server';
import type { ResourceLink } from '@modelcontextprotocol/server';
import { describeValue, isRetrieverError } from '../../../errors.js';
import { fetchChunks } from '../../../search/fetch.js';
import { formatChunk } from '../format.js';
import type { ToolContext } from '../tool-context.js';

/** A passage's URI: `retriever://CORPUS/chunks/ID`, the id percent-encoded (ids such as `5#0` hold `#`). */
export function chunkUri(corpus: string, id: string): string {
  return `retriever://${corpus}/chunks/${encodeURIComponent(id)}`;
}

/** A `resource_link` to a hit's passage, so a host can open it without a tool call. */
export function chunkLink(corpus: string, hit: { id: string; title: string }): ResourceLink {
  return {
    type: 'resource_link',
    uri: chunkUri(corpus, hit.id),
    name: hit.id,
    title: hit.title,
    mimeType: 'text/plain',
  };
}

/**
 * Every passage as an MCP resource, by template (`resources/templates/list`
 * names it; there is no list: a corpus holds up to tens of millions). Read
 * gives the passage as `fetch` formats it. A passage never changes while an
 * index is served, so 2026-07-28 clients may cache a read for an hour.
 */
export function registerChunkResource(ctx: ToolContext): void {
  ctx.server.registerResource(
    'passage',
    new ResourceTemplate('retriever://{corpus}/chunks/{id}', { list: undefined }),
    {
      title: 'A passage of a corpus',
      description: 'One passage (chunk) by corpus and id, as search results link to it.',
      mimeType: 'text/plain',
      cacheHint: { ttlMs: 3_600_000, cacheScope: 'private' },
    },
    async (uri, variables) => {
      const corpus = decodePart(String(variables['corpus']), 'corpus');
      const id = decodePart(String(variables['id']), 'id');
      let chunks;
      try {
        ({ chunks } = await ctx.guard(() => fetchChunks(ctx.slot.get(), { id, corpus })));
      } catch (err) {
        // an unknown corpus is a resource that does not exist, not a server fault
        if (isRetrieverError(err, 'UNKNOWN_CORPUS')) throw new ResourceNotFoundError(uri.href, (err as Error).message);
        throw err;
      }
      const chunk = chunks[0];
      if (!chunk)
        throw new ResourceNotFoundError(uri.href, `no passage ${describeValue(id)} in corpus ${describeValue(corpus)}`);
      return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: formatChunk(chunk) }] };
    },
  );
}

/** A URI part, percent-decoded; bad percent-encoding (`%ZZ`) is the client's invalid params, not a server fault. */
function decodePart(part: string, name: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid params: the ${name} in the uri is not valid percent-encoding (${describeValue(part)}): encode it with encodeURIComponent`,
    );
  }
}

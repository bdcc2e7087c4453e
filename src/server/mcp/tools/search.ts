import { z } from 'zod';
import type { ToolContext } from '../tool-context.js';
import { formatHit } from '../format.js';
import { FILTER_HELP, filterSchema, modeSchema, querySchema, searchResultShape, topKSchema } from '../schemas.js';
import type { SearchHit, SearchResult } from '../../../search/types.js';

export function registerSearch(ctx: ToolContext): void {
  const { server, retriever } = ctx;
  const o = retriever.opts;
  server.registerTool(
    'search',
    {
      title: 'Search the corpus',
      description:
        `Retrieve the passages most relevant to a natural-language query from ${describeCorpora(ctx)}. ` +
        `Returns up to top_k passages (default ${o.topK}), best first, each as "Doc N [id ID] (Title: …) text"; pass an ID to fetch for its neighbours or whole document. ` +
        'Ask focused questions; issue several searches for multi-hop questions.' +
        FILTER_HELP,
      inputSchema: {
        query: querySchema(o.maxQueryChars).describe('what to search for'),
        top_k: topKSchema(o.maxTopK).optional(),
        mode: modeSchema.optional(),
        filter: filterSchema.optional(),
        corpus: z.string().optional().describe(`which corpus (default ${retriever.defaultCorpus.name})`),
      },
      outputSchema: searchResultShape,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) => {
      const res = await ctx.guard(() =>
        retriever.search({
          query: args.query,
          topK: args.top_k,
          mode: args.mode,
          corpus: args.corpus,
          filter: args.filter,
        }),
      );
      const content =
        res.results.length > 0
          ? res.results.map((h) => ({ type: 'text' as const, text: formatHit(h) }))
          : [{ type: 'text' as const, text: noMatches(res) }];
      return { content, structuredContent: { ...res, results: res.results.map(toHitOut) } };
    },
  );
}

/** Why a search found nothing, so an agent knows whether to reword the query or loosen the filter. */
export function noMatches(res: SearchResult): string {
  if (res.filter_matches === 0) {
    return `No passages matched: the filter excluded every passage of corpus ${res.corpus}. list_corpora shows the sources, categories and dates it holds.`;
  }
  if (res.filter_matches !== undefined) {
    return `No passages matched the query among the ${res.filter_matches} passages the filter allows in corpus ${res.corpus}.`;
  }
  return `No passages matched the query in corpus ${res.corpus}.`;
}

/** A hit as MCP clients see it: `contents` duplicates title and text, so it stays out. */
export function toHitOut(h: SearchHit): Omit<SearchHit, 'contents'> {
  const { contents: _contents, ...rest } = h;
  return rest;
}

export function describeCorpora(ctx: ToolContext): string {
  return ctx.retriever.corpora.map((c) => `"${c.name}" (${c.manifest.corpus.chunks} passages)`).join(', ');
}

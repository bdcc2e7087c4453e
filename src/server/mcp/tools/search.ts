import { z } from 'zod';
import { schemasOnce, type ToolContext } from '../tool-context.js';
import { formatHit } from '../format.js';
import { chunkLink } from '../resources/chunks.js';
import {
  checkToolArgs,
  FILTER_HELP,
  filterArg,
  optionalArg,
  modeSchema,
  querySchema,
  searchResultSchema,
  toolArgs,
  topKSchema,
} from '../schemas.js';
import {
  corporaArg,
  corpusArg,
  denseModel,
  describeCorpora,
  describeTopK,
  noMatches,
  readySlot,
  toHitOut,
} from '../tool-helpers.js';
import { MAX_PHRASINGS } from '../../../search/retriever.js';
import { RetrieverError } from '../../../errors.js';
import { answerMeter } from '../../answer-size.js';

/** The longest query vector taken (e5-large and bge-large are 1,024-d; the largest models 4,096). */
const MAX_VECTOR_DIM = 8192;

export function registerSearch(ctx: ToolContext): void {
  const { server, slot } = ctx;
  const o = slot.opts;
  const model = denseModel(ctx);
  const { shape, input } = schemasOnce(ctx, `search ${model}`, () => {
    const shape = {
      query: z
        .union([querySchema(o.maxQueryChars), z.array(querySchema(o.maxQueryChars)).min(1).max(MAX_PHRASINGS)])
        .describe(
          `what to search for; or up to ${MAX_PHRASINGS} phrasings of one need (keywords and a question, say), each searched and fused into one ranking`,
        ),
      top_k: optionalArg(topKSchema(o.maxTopK)),
      mode: optionalArg(modeSchema(model)),
      filter: filterArg(),
      corpus: optionalArg(corpusArg(slot.names)),
      query_vector: optionalArg(
        z
          .array(z.number())
          .min(1)
          .max(MAX_VECTOR_DIM)
          .describe(
            "the query's embedding, computed elsewhere with the index's model, used by the dense arm instead of encoding `query` (for programs; models leave it out)",
          ),
      ),
    };
    return { shape, input: toolArgs(shape) };
  });
  server.registerTool(
    'search',
    {
      title: 'Search the corpus',
      description:
        `Retrieve the passages most relevant to a natural-language query from ${describeCorpora(ctx)}. ` +
        `Returns up to top_k passages (default ${describeTopK(ctx)}), best first, each as "Doc N [id ID] (Title: …; Source: …; Category: …; date) text" (source, category and date where the corpus has them); pass an ID to fetch for its neighbours or whole document. ` +
        'Ask focused questions; issue several searches for multi-hop questions.' +
        FILTER_HELP,
      inputSchema: input,
      outputSchema: searchResultSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) => {
      checkToolArgs('search', args, shape);
      const retriever = await readySlot(ctx, extra);
      const phrasings = typeof args.query === 'string' ? [args.query] : args.query;
      const corpora = corporaArg(args.corpus);
      const fused = phrasings.length > 1 || corpora !== undefined;
      if (fused && args.query_vector) {
        throw new RetrieverError(
          'BAD_INPUT',
          'query_vector goes with one query on one corpus: leave out the other phrasings and corpora, or the vector',
        );
      }
      const res = await ctx.guard(() =>
        fused
          ? retriever.searchFused(phrasings, corpora ?? [retriever.defaultCorpus.name], {
              topK: args.top_k,
              mode: args.mode,
              filter: args.filter,
              meter: answerMeter('mcp'),
            })
          : retriever.search({
              query: phrasings[0] as string,
              topK: args.top_k,
              mode: args.mode,
              corpus: typeof args.corpus === 'string' ? args.corpus : args.corpus?.[0],
              filter: args.filter,
              meter: answerMeter('mcp'),
              ...(args.query_vector ? { vectors: [args.query_vector] } : {}),
            }),
      );
      const content = [
        ...(res.note ? [{ type: 'text' as const, text: `Note: ${res.note}.` }] : []),
        ...(res.results.length > 0
          ? res.results.map((h) => ({ type: 'text' as const, text: formatHit(h) }))
          : [{ type: 'text' as const, text: noMatches(res) }]),
      ];
      // after the text blocks (clients that read the first block, or only text, see what they did)
      const links = ctx.resourceLinks ? res.results.map((h) => chunkLink(res.corpus, h)) : [];
      return {
        content: [...content, ...links],
        structuredContent: { ...res, results: res.results.map(toHitOut) },
      };
    },
  );
}

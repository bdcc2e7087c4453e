import { z } from 'zod';
import { schemasOnce, type ToolContext } from '../tool-context.js';
import { formatHit } from '../format.js';
import { chunkLink } from '../resources/chunks.js';
import {
  checkToolArgs,
  filterArg,
  optionalArg,
  hitSchema,
  modeSchema,
  querySchema,
  toolArgs,
  topKSchema,
  jsonOnce,
} from '../schemas.js';
import { SEARCH_MODES } from '../../../search/types.js';
import { corporaArg, corpusArg, denseModel, describeCorpora, noMatches, readySlot, toHitOut } from '../tool-helpers.js';
import { answerMeter } from '../../answer-size.js';

export function registerBatchSearch(ctx: ToolContext): void {
  const { server, slot } = ctx;
  const o = slot.opts;
  const model = denseModel(ctx);
  const { shape, input, output } = schemasOnce(ctx, `batch_search ${model} ${ctx.maxBatchQueries}`, () => {
    const shape = {
      queries: z.array(querySchema(o.maxQueryChars)).min(1).max(ctx.maxBatchQueries).describe('the queries'),
      top_k: optionalArg(topKSchema(o.maxTopK)),
      mode: optionalArg(modeSchema(model)),
      filter: filterArg(),
      corpus: optionalArg(corpusArg(slot.names)),
    };
    const output = jsonOnce(
      z.object({
        corpus: z.string(),
        mode: z.enum(SEARCH_MODES),
        results: z.array(z.array(hitSchema)),
        note: z.string().optional().describe('why the answers ran in another mode than the usual default'),
      }),
    );
    return { shape, input: toolArgs(shape), output };
  });
  server.registerTool(
    'batch_search',
    {
      title: 'Search several queries at once',
      description:
        `Run up to ${ctx.maxBatchQueries} queries against ${describeCorpora(ctx)} in one call. ` +
        'Returns one result list per query, in the order given.',
      inputSchema: input,
      outputSchema: output,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) => {
      checkToolArgs('batch_search', args, shape);
      const retriever = await readySlot(ctx, extra);
      const corpora = corporaArg(args.corpus);
      const req = { topK: args.top_k, mode: args.mode, filter: args.filter, meter: answerMeter('mcp') };
      const res = await ctx.guard(() =>
        corpora !== undefined
          ? // each query over every corpus named, fused by RRF
            Promise.all(args.queries.map((q) => retriever.searchFused([q], corpora, req)))
          : retriever.searchMany(args.queries, {
              ...req,
              corpus: typeof args.corpus === 'string' ? args.corpus : args.corpus?.[0],
            }),
      );
      const first = res[0];
      const content = res.map((r, i) => ({
        type: 'text' as const,
        text: [
          ...(i === 0 && r.note ? [`Note: ${r.note}.`] : []),
          `Query ${i + 1}: ${args.queries[i]}`,
          ...(r.results.length > 0 ? r.results.map(formatHit) : [noMatches(r)]),
        ].join('\n'),
      }));
      // after the text blocks (clients that read the first block, or only text, see what they did)
      const links = ctx.resourceLinks ? res.flatMap((r) => r.results.map((h) => chunkLink(r.corpus, h))) : [];
      return {
        content: [...content, ...links],
        structuredContent: {
          corpus: first?.corpus ?? retriever.defaultCorpus.name,
          mode: first?.mode ?? retriever.modeFor(retriever.defaultCorpus),
          results: res.map((r) => r.results.map(toHitOut)),
          ...(first?.note ? { note: first.note } : {}),
        },
      };
    },
  );
}

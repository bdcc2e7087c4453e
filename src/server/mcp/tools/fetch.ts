import { z } from 'zod';
import { FETCH_LIMITS, fetchChunks } from '../../../search/fetch.js';
import type { ChunkRecord } from '../../../store/chunk-store.js';
import { formatChunk } from '../format.js';
import { checkToolArgs, chunkSchema, intArg, jsonOnce, optionalArg, toolArgs } from '../schemas.js';
import { schemasOnce, type ToolContext } from '../tool-context.js';
import { answerMeter } from '../../answer-size.js';

export function registerFetch(ctx: ToolContext): void {
  const { server, slot } = ctx;
  const { shape, input, output } = schemasOnce(ctx, 'fetch', () => {
    const shape = {
      ids: optionalArg(
        z
          .array(z.string().max(1024))
          .min(1)
          .max(FETCH_LIMITS.maxIds)
          .describe('passage ids from search results (give ids, id or doc_id)'),
      ),
      id: optionalArg(z.string().max(1024).describe('one passage id (give ids, id or doc_id)')),
      doc_id: optionalArg(
        z.string().max(1024).describe('a document id: its passages in order (give ids, id or doc_id)'),
      ),
      around: optionalArg(
        intArg(z.number().int().min(0).max(FETCH_LIMITS.maxAround)).describe(
          `with ids or id: also this many neighbouring passages on each side (0-${FETCH_LIMITS.maxAround})`,
        ),
      ),
      position: optionalArg(
        intArg(z.number().int().min(0)).describe('with doc_id: only the passages around this position'),
      ),
      corpus: optionalArg(z.string().describe(`which corpus (default: the first that holds the id)`)),
    };
    const output = jsonOnce(
      z.object({
        corpus: z.string(),
        chunks: z.array(chunkSchema),
        missing: z.array(z.string()),
        truncated: z.boolean(),
      }),
    );
    return { shape, input: toolArgs(shape), output };
  });
  server.registerTool(
    'fetch',
    {
      title: 'Fetch passages by id',
      description:
        'Return the full text of passages. Give "ids" (a list of passage ids from search results) or "id" (one id), ' +
        'optionally with "around": n to include n neighbouring passages of the same document on each side; ' +
        'or give "doc_id" to read a whole document (optionally only around "position").',
      inputSchema: input,
      outputSchema: output,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) => {
      checkToolArgs('fetch', args, shape);
      const res = await ctx.guard(() => fetchChunks(slot.get(), args, answerMeter('mcp')));
      const text = [
        ...res.chunks.map(formatChunk),
        ...(res.missing.length > 0 ? [`Not found: ${res.missing.join(', ')}`] : []),
        ...(res.truncated ? [`(truncated to ${FETCH_LIMITS.maxChunks} passages)`] : []),
      ];
      return {
        content: text.map((t) => ({ type: 'text' as const, text: t })),
        structuredContent: {
          corpus: res.corpus,
          chunks: res.chunks.map(toChunkOut),
          missing: res.missing,
          truncated: res.truncated,
        },
      };
    },
  );
}

function toChunkOut(c: ChunkRecord): z.infer<typeof chunkSchema> {
  const out: z.infer<typeof chunkSchema> = {
    id: c.id,
    doc_id: c.docId,
    position: c.position,
    title: c.title,
    text: c.text,
  };
  if (c.metadata) out.metadata = c.metadata;
  return out;
}

import { z } from 'zod';
import { SEARCH_MODES } from '../../../search/types.js';
import type { ToolContext } from '../tool-context.js';

export function registerListCorpora(ctx: ToolContext): void {
  const { server, retriever } = ctx;
  server.registerTool(
    'list_corpora',
    {
      title: 'List the corpora',
      description: 'List the corpora this server searches, with their sizes, search modes, encoder and build date.',
      inputSchema: {},
      outputSchema: {
        corpora: z.array(
          z.object({
            name: z.string(),
            format: z.string(),
            documents: z.number().int(),
            chunks: z.number().int(),
            modes: z.array(z.enum(SEARCH_MODES)),
            default_mode: z.enum(SEARCH_MODES),
            encoder: z.string().nullable(),
            built_at: z.string(),
            index_bytes: z.number().int(),
          }),
        ),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => {
      const corpora = retriever.corpora.map((c) => ({
        name: c.name,
        format: c.manifest.corpus.format,
        documents: c.manifest.corpus.documents,
        chunks: c.manifest.corpus.chunks,
        modes: c.modes,
        default_mode: retriever.modeFor(c),
        encoder: c.manifest.dense?.encoder.id ?? null,
        built_at: c.manifest.built_at,
        index_bytes: Object.values(c.manifest.files).reduce((s, f) => s + f.bytes, 0),
      }));
      const text = corpora
        .map(
          (c) =>
            `${c.name}: ${c.chunks} passages from ${c.documents} documents (${c.format}); modes ${c.modes.join(', ')} (default ${c.default_mode}); encoder ${c.encoder ?? 'none'}; built ${c.built_at}`,
        )
        .join('\n');
      return { content: [{ type: 'text' as const, text }], structuredContent: { corpora } };
    },
  );
}

import { z } from 'zod';
import { SEARCH_MODES } from '../../../search/types.js';
import type { Facets } from '../../../store/chunk-store.js';
import { describePending, describeState } from '../retriever-slot.js';
import { checkToolArgs, toolArgs, jsonOnce } from '../schemas.js';
import type { ToolContext } from '../tool-context.js';
import { TOOL_VERSION } from '../../../version.js';
import { denseSide } from '../../../search/retriever.js';
import type { ServedCorpus } from '../../../search/served-corpus.js';
import type { DenseArm } from '../../../core/contracts.js';

/** Built once (they depend on nothing served): see schemasOnce. */
const LIST_INPUT = toolArgs({});
const LIST_OUTPUT = jsonOnce(
  z.object({
    version: z.string().describe('retriever-mcp version'),
    corpora: z.array(
      z.object({
        name: z.string(),
        status: z.object({
          state: z.enum(['building', 'opening', 'ready', 'failed']),
          phase: z.string().optional(),
          percent: z.number().optional(),
          eta_seconds: z.number().optional(),
          error: z.string().optional(),
          serving: z
            .array(z.enum(SEARCH_MODES))
            .optional()
            .describe('while a first build embeds: the modes that already answer (bm25)'),
        }),
        // the rest is known once the corpus is ready
        format: z.string().optional(),
        documents: z.number().int().optional(),
        chunks: z.number().int().optional(),
        modes: z.array(z.enum(SEARCH_MODES)).optional(),
        default_mode: z.enum(SEARCH_MODES).optional(),
        encoder: z.string().nullable().optional(),
        dense_index: z.string().optional().describe("the dense index's kind and search settings"),
        built_at: z.string().optional(),
        index_bytes: z.number().int().optional(),
        facets: z
          .object({
            sources: z.array(facetValue()),
            categories: z.array(facetValue()),
            published: z.object({ first: z.string(), last: z.string() }).nullable(),
          })
          .optional(),
      }),
    ),
  }),
);

export function registerListCorpora(ctx: ToolContext): void {
  const { server, slot } = ctx;
  server.registerTool(
    'list_corpora',
    {
      title: 'List the corpora',
      description:
        'List the corpora this server searches, with their sizes, search modes, encoder and build date, and what a search filter can select in each: sources and categories with document counts, and the range of publication dates. ' +
        'While a first run builds a corpus, its status says the phase, percent done and ETA.',
      inputSchema: LIST_INPUT,
      outputSchema: LIST_OUTPUT,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) => {
      checkToolArgs('list_corpora', args, {});
      const retriever = slot.current();
      if (!retriever) {
        const states = slot.list();
        const corpora = states.map(({ name, ...status }) => ({ name, status }));
        const text = states.map(describeState).join('\n');
        return { content: [{ type: 'text' as const, text }], structuredContent: { version: TOOL_VERSION, corpora } };
      }
      const corpora = retriever.corpora.map((c) => ({
        name: c.name,
        status:
          c.kind === 'local' && c.pending
            ? { ...(slot.state(c.name) ?? { state: 'building' as const }), name: undefined, serving: c.modes }
            : { state: 'ready' as const },
        format: c.manifest.corpus.format,
        documents: c.manifest.corpus.documents,
        chunks: c.manifest.corpus.chunks,
        modes: c.modes,
        default_mode: retriever.modeFor(c),
        encoder: denseSide(c).manifest.dense?.encoder.id ?? null,
        ...(denseSide(c).kind === 'local' && denseArm(c) ? { dense_index: denseArm(c)?.description } : {}),
        built_at: c.manifest.built_at,
        index_bytes: Object.values(c.manifest.files).reduce((s, f) => s + f.bytes, 0),
        facets: c.facets(),
      }));
      const text = corpora
        .map(
          (c) =>
            `${c.name}: ${c.status.state === 'building' ? `${c.modes.join(', ')} ready; ${describePending(slot.state(c.name))}; ` : ''}${c.chunks} passages from ${c.documents} documents (${c.format}); modes ${c.modes.join(', ')} (default ${c.default_mode}); encoder ${c.encoder ?? 'none'}${c.dense_index ? `; dense index ${c.dense_index}` : ''}; built ${c.built_at}` +
            facetLines(c.facets),
        )
        .join('\n');
      return {
        content: [{ type: 'text' as const, text: `retriever-mcp ${TOOL_VERSION}\n${text}` }],
        structuredContent: { version: TOOL_VERSION, corpora },
      };
    },
  );
}

/** The dense arm that answers for a corpus: while a folder's update embeds, the build it replaces holds it. */
function denseArm(c: ServedCorpus): DenseArm | null {
  const d = denseSide(c);
  return d.kind === 'local' ? d.dense : null;
}

/** A fresh schema per use, so the JSON schema repeats it instead of a $ref. */
function facetValue() {
  return z.object({ value: z.string(), documents: z.number().int() });
}

/** The facets as a filter would name them, ten values a kind at most. */
function facetLines(f: Facets): string {
  const list = (xs: Facets['sources']): string =>
    xs
      .slice(0, 10)
      .map((x) => `${x.value} (${x.documents})`)
      .join(', ') + (xs.length > 10 ? `, and ${xs.length - 10} more` : '');
  const lines = [
    ...(f.sources.length > 0 ? [`  filter source: ${list(f.sources)}`] : []),
    ...(f.categories.length > 0 ? [`  filter category: ${list(f.categories)}`] : []),
    ...(f.published
      ? [`  filter published_after / published_before: ${f.published.first} to ${f.published.last}`]
      : []),
  ];
  return lines.length > 0 ? `\n${lines.join('\n')}` : '';
}

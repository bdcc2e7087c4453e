import { z } from 'zod';
import type { Retriever } from '../../search/retriever.js';
import type { SearchHit, SearchResult } from '../../search/types.js';
import { describeState } from './retriever-slot.js';
import type { ToolContext } from './tool-context.js';

/** What the search tools share: the ready retriever, hit shapes, and descriptions made from the served corpora. */

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

/** The default top_k, per corpus where presets set their own ("4 for multihop, 5 for graphrag-novel"). */
export function describeTopK(ctx: ToolContext): string {
  const o = ctx.slot.opts;
  const own = ctx.slot.names.filter((n) => o.topKByCorpus?.[n] !== undefined && o.topKByCorpus[n] !== o.topK);
  if (own.length === 0) return String(o.topK);
  if (own.length === ctx.slot.names.length && new Set(own.map((n) => o.topKByCorpus?.[n])).size === 1)
    return String(o.topKByCorpus?.[own[0] as string]);
  return `${own.map((n) => `${o.topKByCorpus?.[n]} for ${n}`).join(', ')}, else ${o.topK}`;
}

/** The dense arm's model, as the mode description names it (the served indexes' own, once they are open). */
export function denseModel(ctx: ToolContext): string | undefined {
  const models = new Set(
    (ctx.slot.current()?.corpora ?? []).flatMap((c) => (c.manifest.dense ? [c.manifest.dense.encoder.model] : [])),
  );
  return models.size > 0 ? [...models].join(', ') : undefined;
}

export function describeCorpora(ctx: ToolContext): string {
  const r = ctx.slot.current();
  if (!r) return ctx.slot.names.map((n) => `"${n}"`).join(', ');
  return r.corpora.map((c) => `"${c.name}" (${c.manifest.corpus.chunks} passages)`).join(', ');
}

/**
 * The retriever, or (while a first run builds) a NOT_READY error naming each
 * corpus's phase, percent and ETA; a client that sent a progress token gets
 * the build's progress as a notification first.
 */
export async function readySlot(ctx: ToolContext, extra: ToolExtra): Promise<Retriever> {
  if (ctx.slot.ready) return ctx.slot.get();
  const token = extra.mcpReq._meta?.progressToken;
  if (token !== undefined) {
    const building = ctx.slot.list().find((s) => s.state === 'building');
    await extra.mcpReq
      .notify({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress: building?.percent ?? 0,
          total: 100,
          message: building ? describeState(building) : 'opening the corpora',
        },
      })
      .catch(() => undefined);
    // the SDK's client handles a notification a microtask after it reads it but a response at once,
    // so a notification and the response read in one chunk would lose the notification: let it go first
    await new Promise((r) => setTimeout(r, 20));
  }
  return ctx.slot.get();
}

/** What a tool handler receives besides its arguments (the part used here). */
export interface ToolExtra {
  mcpReq: {
    _meta?: { progressToken?: string | number };
    notify: (n: {
      method: 'notifications/progress';
      params: { progressToken: string | number; progress: number; total: number; message: string };
    }) => Promise<void>;
  };
}

/** `corpus`: one name, a list of names, or "*" for every served corpus (a list or "*" fuses by RRF). */
export function corpusArg(names: readonly string[]) {
  return z
    .union([z.string(), z.array(z.string()).min(1)])
    .describe(
      `which corpus (default ${names[0]}); a list of names, or "*" for every one served${names.length > 1 ? ` (${names.join(', ')})` : ''}, searches them all and fuses the lists by RRF, each hit naming its corpus`,
    );
}

/** The corpora a `corpus` argument names for a fused search, or undefined for one corpus (the plain search). */
export function corporaArg(corpus: string | string[] | undefined): string[] | '*' | undefined {
  if (corpus === undefined) return undefined;
  if (corpus === '*' || (Array.isArray(corpus) && corpus.includes('*'))) return '*';
  if (typeof corpus === 'string') return undefined;
  return corpus.length === 1 ? undefined : corpus;
}

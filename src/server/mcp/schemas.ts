import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { topKBounds } from '../../search/retriever.js';
import { intLike, rejectUnknownFields } from '../field-names.js';
import { SEARCH_MODES } from '../../search/types.js';

/** Output shapes shared by the tools (MCP structuredContent) and the REST API. */
export const hitSchema = z.object({
  rank: z.number().int(),
  id: z.string(),
  doc_id: z.string(),
  title: z.string(),
  text: z.string(),
  score: z.number(),
  bm25_score: z.number().optional(),
  bm25_rank: z.number().int().optional(),
  dense_score: z.number().optional(),
  dense_rank: z.number().int().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  corpus: z.string().optional().describe('in a search of several corpora: the corpus the hit is from'),
});

export const searchResultSchema = jsonOnce(
  z.object({
    corpus: z.string(),
    mode: z.enum(SEARCH_MODES),
    results: z.array(hitSchema),
    filter_matches: z.number().int().optional(),
    note: z.string().optional().describe('why the answer ran in another mode than the usual default'),
  }),
);

export const chunkSchema = z.object({
  id: z.string(),
  doc_id: z.string(),
  position: z.number().int(),
  title: z.string(),
  text: z.string(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** `mode`, described with the served indexes' embedding model where it is known (the tools are made per server). */
export function modeSchema(denseModel?: string) {
  return (
    z
      // a fixed message: zod's own echoes the received value, which a client may make a megabyte long
      .enum(SEARCH_MODES, { error: () => `mode must be one of ${SEARCH_MODES.join(', ')}` })
      .describe(
        `hybrid = BM25 and dense fused by Reciprocal Rank Fusion; dense = embeddings of ${denseModel ?? "the index's model"} only; bm25 = keywords only`,
      )
  );
}

export function topKSchema(maxTopK: number) {
  const { min, max } = topKBounds(maxTopK);
  return intArg(z.number().int().min(min).max(max)).describe(`number of passages to return (${min}-${max})`);
}

/** An integer argument that also takes the same integer written as a string ("5"), as LLMs often send it. */
export function intArg<T extends z.ZodType>(schema: T) {
  return z.preprocess(intLike, schema);
}

/**
 * A tool's arguments: its fields, with unknown ones kept (not silently dropped) so the handler can
 * name them (`checkToolArgs`): `{"k": 10}` was ignored and answered with the default top_k. The
 * JSON Schema hosts see still says `additionalProperties: false` (zod 4 writes a loose object's as
 * `{}`, a schema, which the strictest function-calling hosts refuse).
 */
export function toolArgs<T extends z.ZodRawShape>(shape: T) {
  return jsonOnce(z.looseObject(shape).meta({ additionalProperties: false }));
}

/** Throws for an argument the tool does not take, naming the nearest one it does. */
export function checkToolArgs(tool: string, args: Record<string, unknown>, shape: z.ZodRawShape): void {
  rejectUnknownFields(tool, args, Object.keys(shape), 'argument');
}

export function querySchema(maxChars: number) {
  return z
    .string()
    .max(maxChars)
    .refine((q) => q.trim() !== '', { message: 'query is empty: send the words to search for' });
}

/**
 * An optional argument that also takes `null` as absent, in its JSON Schema (a member `{"type":
 * "null"}` beside its own) and in validation (handlers see undefined). Frameworks send null for
 * every optional field they do not set (mcp-use's LangChain adapter, on every call), and a strict
 * schema conversion (OpenAI Agents' `convert_schemas_to_strict`) makes every property required, so
 * null is the only way such a client can leave one out. A union's members stay one flat `anyOf`.
 */
export function optionalArg<T extends z.ZodType>(schema: T) {
  const described = schema.description;
  // said once, on the argument: not again on the member its schema now is (each is sent to the
  // model with every tool list)
  if (described !== undefined) z.globalRegistry.remove(schema);
  // a union gains a member, so its anyOf stays flat; anything else is made nullable, so its own
  // errors keep their messages and paths (jsonOnce writes a nullable string's list of types as anyOf)
  const nullable =
    schema instanceof z.ZodUnion
      ? z.union([...(schema.options as readonly z.ZodType[]), z.null()] as unknown as [z.ZodType, z.ZodType])
      : schema.nullable();
  const out = nullable.optional().transform((v: unknown) => (v === null ? undefined : v) as z.output<T> | undefined);
  return described !== undefined ? out.describe(described) : out;
}

/** A fresh schema per field: a shared instance is written as a $ref, which some hosts' function calling rejects. */
const stringOrList = () => z.union([z.string(), z.array(z.string()).min(1).max(100)]);

/** Metadata filter, applied inside both arms before top-k (see the tool description). */
export const filterSchema = z
  .object({
    source: optionalArg(stringOrList()).describe('publisher(s), e.g. "TechCrunch" (case-insensitive)'),
    category: optionalArg(stringOrList()).describe('category or categories, e.g. "technology"'),
    published_after: optionalArg(z.string()).describe(
      'only documents published on or after this date (YYYY-MM-DD or ISO time)',
    ),
    published_before: optionalArg(z.string()).describe('only documents published on or before this date'),
    doc_id: optionalArg(stringOrList()).describe('only these document ids'),
  })
  .strict();

/** `filter` as the search tools take it: optional, null as absent, described for the model. */
export function filterArg() {
  return optionalArg(filterSchema).describe(
    'narrows the search before ranking, inside both arms: only passages whose documents match every field given ' +
      '(source, category, published_after, published_before, doc_id)',
  );
}

export const FILTER_HELP =
  ' Optional `filter` narrows the search before ranking: {source, category, published_after, published_before, doc_id}' +
  ' — use it when the question names a publisher or a time ("according to TechCrunch", "in October 2023").';

type JsonSchemaFn = (options: { target: string; libraryOptions?: Record<string, unknown> }) => Record<string, unknown>;

/**
 * The schema, with its JSON Schema computed once per target: the SDK converts
 * a tool's input and output schemas on every request, and stateless serving
 * makes a server (so a tool) a request; the conversion was 16% of the
 * server's CPU in the verl pattern (bench mcp-eras). Validation is zod's own.
 * A list of types (zod's form of a nullable string) is written as an anyOf.
 */
export function jsonOnce<T extends StandardSchemaWithJSON>(schema: T): T {
  const std = schema['~standard'];
  const memo = (convert: JsonSchemaFn): JsonSchemaFn => {
    const cache = new Map<string, Record<string, unknown>>();
    return (options) => {
      const key = JSON.stringify(options);
      let out = cache.get(key);
      if (!out) cache.set(key, (out = singleTypes(convert(options))));
      // a copy each time: a caller that edits what it gets cannot change the next one's
      return structuredClone(out);
    };
  };
  const json = std.jsonSchema as unknown as { input: JsonSchemaFn; output: JsonSchemaFn };
  return {
    '~standard': { ...std, jsonSchema: { input: memo(json.input), output: memo(json.output) } },
  } as unknown as T;
}

/** Keywords that describe a property as a whole, kept beside an anyOf; the rest go to its typed member. */
const WHOLE = new Set(['description', 'title', 'default', 'examples', '$schema']);

/**
 * The schema with each `type: [a, "null"]` written as `anyOf: [{type: a, …}, {type: "null"}]`:
 * Gemini's function declarations take a single type per schema (anyOf is theirs to read).
 */
function singleTypes(schema: Record<string, unknown>): Record<string, unknown> {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v !== 'object' || v === null) return v;
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = walk(x);
    if (!Array.isArray(o['type'])) return o;
    const whole: Record<string, unknown> = {};
    const own: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(o)) if (k !== 'type') (WHOLE.has(k) ? whole : own)[k] = x;
    const types = o['type'] as string[];
    return {
      ...whole,
      anyOf: types.map((t) => (t === 'null' ? { type: 'null' } : { type: t, ...own })),
    };
  };
  return walk(schema) as Record<string, unknown>;
}

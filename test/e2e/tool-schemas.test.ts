/**
 * Tool input schemas every function-calling host accepts. The strictest
 * documented rules are Gemini's `FunctionDeclaration.parameters`, a subset
 * of OpenAPI 3.0's Schema object: no $ref / $defs, no oneOf / allOf / not,
 * a single `type` per schema, and only the keywords below. The MCP SDK adds
 * `$schema` at the root and `additionalProperties: false` on objects (what
 * OpenAI's strict mode requires); those two are allowed here and hosts
 * without them drop them.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { build, writeJsonl } from '../helpers/build.js';
import { connectStdio } from '../helpers/mcp.js';
import { makeTempDir } from '../helpers/paths.js';

const GEMINI_KEYS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);
const SDK_KEYS = new Set(['additionalProperties']);

/** Every rule broken anywhere in `schema`, as "path: problem". */
function violations(schema: unknown, path = '$'): string[] {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return [`${path}: not a schema object`];
  const s = schema as Record<string, unknown>;
  const out: string[] = [];
  for (const key of Object.keys(s)) {
    if (key === '$schema' && path === '$') continue;
    if (!GEMINI_KEYS.has(key) && !SDK_KEYS.has(key)) out.push(`${path}: keyword ${key}`);
  }
  if (Array.isArray(s['type'])) out.push(`${path}: type is a list`);
  if (s['type'] === undefined && s['anyOf'] === undefined) out.push(`${path}: no type`);
  if (s['additionalProperties'] !== undefined && typeof s['additionalProperties'] !== 'boolean')
    out.push(`${path}: additionalProperties is a schema`);
  for (const [name, sub] of Object.entries((s['properties'] as Record<string, unknown> | undefined) ?? {}))
    out.push(...violations(sub, `${path}.${name}`));
  if (s['items'] !== undefined) out.push(...violations(s['items'], `${path}[]`));
  for (const [i, sub] of ((s['anyOf'] as unknown[] | undefined) ?? []).entries()) {
    out.push(...violations(sub, `${path}|${i}`));
    if ((sub as { type?: unknown }).type === undefined) out.push(`${path}|${i}: untyped anyOf member`);
  }
  return out;
}

const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'indexes');
beforeAll(async () => {
  const input = writeJsonl(tmp.dir, 'wiki.jsonl', [
    { id: 'p0', contents: '"Tokyo"\nTokyo is the capital of Japan.' },
    { id: 'p1', contents: '"Kyoto"\nKyoto was the capital of Japan before Tokyo.' },
  ]);
  await build({ name: 'wiki', input, format: 'wiki18', indexDir });
});
afterAll(() => tmp.cleanup());

describe('tool input schemas', () => {
  it('follow the strictest documented function-calling rules, with no $ref anywhere', async () => {
    const s = await connectStdio(['--corpus', 'wiki', '--index-dir', indexDir]);
    try {
      const { tools } = await s.client.listTools();
      expect(tools.length).toBe(4);
      for (const t of tools) {
        expect(JSON.stringify(t.inputSchema), t.name).not.toMatch(/\$ref|\$defs|definitions/);
        expect(violations(t.inputSchema), t.name).toEqual([]);
        expect(t.inputSchema.type, t.name).toBe('object');
      }
    } finally {
      await s.close();
    }
  });

  it('the checker itself rejects what those rules forbid', () => {
    expect(violations({ type: 'object', properties: { a: { $ref: '#/x' } } })).toContain('$.a: keyword $ref');
    expect(violations({ type: ['string', 'null'] })).toContain('$: type is a list');
    expect(violations({ oneOf: [{ type: 'string' }] })).toEqual(['$: keyword oneOf', '$: no type']);
  });

  it('every property a model sees is described (Reliability V, item 12)', async () => {
    const s = await connectStdio(['--corpus', 'wiki', '--index-dir', indexDir]);
    try {
      const { tools } = await s.client.listTools();
      const undescribed = (schema: Record<string, unknown>, path: string): string[] =>
        Object.entries((schema['properties'] as Record<string, Record<string, unknown>> | undefined) ?? {}).flatMap(
          ([name, sub]) => {
            const here = typeof sub['description'] === 'string' && sub['description'] !== '' ? [] : [`${path}.${name}`];
            const inner = ((sub['anyOf'] as Array<Record<string, unknown>> | undefined) ?? [sub]).flatMap((m) =>
              undescribed(m, `${path}.${name}`),
            );
            return [...here, ...inner];
          },
        );
      expect(tools.flatMap((t) => undescribed(t.inputSchema as Record<string, unknown>, t.name))).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('a strict conversion (every property required) still admits every kind of call, nulls read as absent (items 10, 11)', async () => {
    const s = await connectStdio(['--corpus', 'wiki', '--index-dir', indexDir]);
    try {
      const { tools } = await s.client.listTools();
      const strict = new Map(tools.map((t) => [t.name, toStrict(structuredClone(t.inputSchema))]));
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      const noFilter = { source: null, category: null, published_after: null, published_before: null, doc_id: null };
      const base = { top_k: null, mode: null, filter: null, corpus: null };
      const one = { ...base, query_vector: null };
      const calls: Array<[string, Record<string, unknown>, RegExp]> = [
        ['search', { query: 'capital of Japan', ...one }, /Doc 1 \[id p[01]\]/],
        ['search', { query: 'capital', ...one, top_k: 1, mode: 'bm25' }, /Doc 1/],
        ['search', { query: 'capital', ...one, filter: { ...noFilter, doc_id: ['p1'] } }, /Doc 1 \[id p1\]/],
        ['search', { query: 'capital', ...one, filter: { ...noFilter, doc_id: 'p0' } }, /Doc 1 \[id p0\]/],
        ['search', { query: ['capital', 'Japan'], ...one, corpus: '*' }, /Doc 1 \[id p[01] in wiki\]/],
        ['search', { query: 'capital', ...one, corpus: ['wiki'] }, /Doc 1 \[id p[01]\]/],
        ['batch_search', { queries: ['Tokyo'], ...base, corpus: '*' }, /Query 1: Tokyo\nDoc 1 \[id p0 in wiki\]/],
        ['batch_search', { queries: ['Tokyo', 'Kyoto'], ...base }, /Query 2: Kyoto/],
        ['fetch', { ids: ['p0'], id: null, doc_id: null, around: null, position: null, corpus: null }, /Tokyo is/],
        ['fetch', { ids: null, id: 'p1', doc_id: null, around: null, position: null, corpus: null }, /Kyoto was/],
        ['fetch', { ids: null, id: null, doc_id: 'p0', around: null, position: null, corpus: null }, /Tokyo is/],
        ['list_corpora', {}, /wiki/],
      ];
      for (const [name, args, expected] of calls) {
        const validate = ajv.compile(strict.get(name) as object);
        expect(validate(args), `${name} ${JSON.stringify(args)}: ${JSON.stringify(validate.errors)}`).toBe(true);
        const r = (await s.client.callTool({ name, arguments: args })) as {
          isError?: boolean;
          content: Array<{ text?: string }>;
        };
        const text = r.content.map((c) => c.text ?? '').join('\n');
        expect(r.isError, `${name}: ${text}`).toBeFalsy();
        expect(text, name).toMatch(expected);
      }
    } finally {
      await s.close();
    }
  });
});

/**
 * OpenAI Agents' strict conversion (`ensure_strict_json_schema`, what `convert_schemas_to_strict`
 * applies): every object closed and every one of its properties required, down through properties,
 * items and anyOf members.
 */
function toStrict(schema: Record<string, unknown>): Record<string, unknown> {
  if (schema['type'] === 'object') schema['additionalProperties'] ??= false;
  const props = schema['properties'] as Record<string, Record<string, unknown>> | undefined;
  if (props) {
    schema['required'] = Object.keys(props);
    for (const sub of Object.values(props)) toStrict(sub);
  }
  if (schema['items'] && typeof schema['items'] === 'object') toStrict(schema['items'] as Record<string, unknown>);
  for (const m of (schema['anyOf'] as Array<Record<string, unknown>> | undefined) ?? []) toStrict(m);
  return schema;
}

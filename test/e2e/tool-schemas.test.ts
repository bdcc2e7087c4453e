/**
 * Tool input schemas every function-calling host accepts. The strictest
 * documented rules are Gemini's `FunctionDeclaration.parameters`, a subset
 * of OpenAPI 3.0's Schema object: no $ref / $defs, no oneOf / allOf / not,
 * a single `type` per schema, and only the keywords below. The MCP SDK adds
 * `$schema` at the root and `additionalProperties: false` on objects (what
 * OpenAI's strict mode requires); those two are allowed here and hosts
 * without them drop them.
 */
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
  const input = writeJsonl(tmp.dir, 'wiki.jsonl', [{ id: 'p0', contents: '"Tokyo"\nTokyo is the capital of Japan.' }]);
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
});

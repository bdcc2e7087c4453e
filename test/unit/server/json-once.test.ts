import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jsonOnce } from '../../../src/server/mcp/schemas.js';

type Convert = (o: { target: string }) => Record<string, unknown>;
const convertersOf = (s: unknown) =>
  (s as { '~standard': { jsonSchema: { input: Convert; output: Convert } } })['~standard'].jsonSchema;

describe('jsonOnce', () => {
  const schema = jsonOnce(z.object({ query: z.string().describe('what to look for'), top_k: z.number().optional() }));

  it("gives zod's own JSON Schema for each target", () => {
    const plain = convertersOf(
      z.object({ query: z.string().describe('what to look for'), top_k: z.number().optional() }),
    );
    for (const target of ['draft-2020-12', 'draft-07']) {
      expect(convertersOf(schema).input({ target })).toEqual(plain.input({ target }));
      expect(convertersOf(schema).output({ target })).toEqual(plain.output({ target }));
    }
  });

  it('gives each caller its own copy: an edit does not reach the next caller', () => {
    const first = convertersOf(schema).input({ target: 'draft-2020-12' });
    (first['properties'] as Record<string, unknown>)['query'] = 'edited';
    first['extra'] = true;
    const second = convertersOf(schema).input({ target: 'draft-2020-12' });
    expect(second).not.toBe(first);
    expect(second['extra']).toBeUndefined();
    expect((second['properties'] as Record<string, { description?: string }>)['query']?.description).toBe(
      'what to look for',
    );
  });

  it('still validates with zod, through the standard interface', async () => {
    const validate = (v: unknown) =>
      (schema as unknown as { '~standard': { validate: (v: unknown) => unknown } })['~standard'].validate(v) as
        { issues?: unknown[] } | Promise<{ issues?: unknown[] }>;
    expect((await validate({ query: 'x' })).issues).toBeUndefined();
    expect((await validate({ query: 5 })).issues?.length).toBeGreaterThan(0);
  });
});

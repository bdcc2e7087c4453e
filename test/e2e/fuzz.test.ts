import fc from 'fast-check';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeJsonl } from '../helpers/build.js';
import { tinyBuildArgs } from '../helpers/encoder.js';
import { connectStdio, runBin, type ToolText } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir } from '../helpers/paths.js';

/**
 * Property-based fuzzing of the tools through a real MCP client and a real
 * server process: random, hostile arguments must always come back as a
 * result or an isError result, never kill the server. FUZZ_RUNS raises the
 * count (RELIABILITY.md reports a 10,000-call run).
 */
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 1500);
const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'idx');

const nasty = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }), // lone surrogates, control characters
  fc.constantFrom(
    '',
    ' ',
    '\t\n',
    '\u0000',
    'x'.repeat(200_000),
    "' OR 1=1 --",
    '"; DROP TABLE chunks; --',
    '../../etc/passwd',
    '%00',
    '\ud800',
  ),
  fc.string({ unit: 'grapheme', maxLength: 50 }),
);
const anyValue = fc.oneof(
  nasty,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(nasty, { maxLength: 3 }),
  fc.object({ maxDepth: 2 }),
);
const topK = fc.oneof(
  fc.integer({ min: -5, max: 200 }),
  fc.double(),
  fc.constantFrom(0, -1, 1e12, Number.MAX_SAFE_INTEGER),
  nasty,
  fc.constant(null),
);
const mode = fc.oneof(fc.constantFrom('hybrid', 'dense', 'bm25'), nasty);
const filter = fc.oneof(
  fc.record(
    {
      source: fc.oneof(nasty, fc.array(nasty, { maxLength: 3 })),
      published_after: fc.oneof(
        nasty,
        fc.constantFrom('2023-10-01', '2023-02-30', '2023-13-01T00:00:00Z', 'yesterday'),
      ),
      doc_id: fc.oneof(nasty, fc.array(nasty, { maxLength: 3 })),
      other: nasty,
    },
    { requiredKeys: [] },
  ),
  anyValue,
);
const call = fc.oneof(
  fc.record({
    name: fc.constant('search'),
    arguments: fc.record({ query: anyValue, top_k: topK, mode, corpus: nasty, filter }, { requiredKeys: [] }),
  }),
  fc.record({
    name: fc.constant('batch_search'),
    arguments: fc.record(
      {
        queries: fc.oneof(
          fc.array(nasty, { maxLength: 8 }),
          anyValue,
          fc.constant(Array.from({ length: 300 }, () => 'q')),
        ),
        top_k: topK,
        mode,
      },
      { requiredKeys: [] },
    ),
  }),
  fc.record({
    name: fc.constant('fetch'),
    arguments: fc.record(
      {
        ids: fc.oneof(fc.array(nasty, { maxLength: 5 }), anyValue),
        id: anyValue,
        doc_id: anyValue,
        around: topK,
        position: topK,
        corpus: nasty,
      },
      { requiredKeys: [] },
    ),
  }),
  fc.record({ name: fc.constantFrom('list_corpora', 'nope', ''), arguments: fc.object({ maxDepth: 1 }) }),
);

describe.skipIf(!HAS_SHARED)('fuzzing the MCP tools', () => {
  beforeAll(() => {
    const input = writeJsonl(
      tmp.dir,
      'c.jsonl',
      Array.from({ length: 200 }, (_, i) => ({ id: String(i), contents: `"T${i}"\nfuzz target text ${i}` })),
    );
    expect(runBin(BIN.build, tinyBuildArgs('c', input, indexDir)).status).toBe(0);
  });
  afterAll(tmp.cleanup);

  it(`survives ${RUNS} random calls with zero crashes`, async () => {
    const s = await connectStdio(['--corpus', 'c', '--index-dir', indexDir]);
    const stats = { requests: 0, ok: 0, isError: 0, protocolErrors: 0 };
    try {
      await fc.assert(
        fc.asyncProperty(call, async (c) => {
          stats.requests++;
          try {
            const r = (await s.client.callTool(c as { name: string; arguments: Record<string, unknown> })) as ToolText;
            if (r.isError) stats.isError++;
            else stats.ok++;
            expect(JSON.stringify(r)).not.toMatch(/\n\s+at .+\.(js|ts):\d+/); // no stack traces
          } catch (err) {
            // a JSON-RPC error (unknown tool, bad params) is a refusal, not a crash
            if (!/MCP error/.test((err as Error).message)) throw err;
            stats.protocolErrors++;
          }
        }),
        { numRuns: RUNS, seed: 42 },
      );
      // still serving normally afterwards
      const r = (await s.client.callTool({
        name: 'search',
        arguments: { query: 'fuzz target', top_k: 2 },
      })) as ToolText;
      expect(r.isError).toBeFalsy();
    } finally {
      await s.close();
    }
    process.stderr.write(`fuzz: ${JSON.stringify({ ...stats, crashes: 0 })}\n`);
    expect(stats.requests).toBe(RUNS);
  }, 600_000);
});

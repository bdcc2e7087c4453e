/**
 * What the stateless MCP path's direct dispatch (the SDK's private
 * `Protocol._onrequest`) saves over the SDK's public path (`onmessage`, which
 * sorts each message with zod guards first): one StatelessMcp with a trivial
 * tool behind a real HTTP server, `--calls` sequential tools/call requests
 * per round, rounds alternated between the two paths. The decision it
 * informs (pin the SDK exactly and keep the direct path) is in DESIGN.md.
 *
 *   npm run bench -- stateless-dispatch [--calls 4000 --rounds 6]
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { StatelessMcp } from '../../src/server/transports/http/mcp-stateless.js';
import { arg, printTable, summarize, writeResult } from '../lib/common.js';

const calls = Number(arg('calls', '4000'));
const rounds = Number(arg('rounds', '6'));

async function round(direct: boolean): Promise<number[]> {
  const server = new McpServer({ name: 'bench', version: '0' });
  server.registerTool(
    'echo',
    { inputSchema: { text: z.string() }, outputSchema: { text: z.string() } },
    ({ text }) => ({ content: [{ type: 'text', text }], structuredContent: { text } }),
  );
  const mcp = new StatelessMcp(server, 30_000, direct);
  const http = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => void mcp.handle(req, res, JSON.parse(Buffer.concat(parts).toString())));
  });
  await new Promise<void>((ok) => http.listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const ms: number[] = [];
  for (let i = 0; i < calls; i++) {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: i,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: `t${i}` } },
    });
    const t = performance.now();
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body,
    });
    await r.text();
    if (i >= 200) ms.push(performance.now() - t); // the first calls warm the JIT
  }
  await mcp.close();
  await new Promise((ok) => http.close(ok));
  return ms;
}

const by: Record<string, number[]> = { direct: [], public: [] };
for (let r = 0; r < rounds; r++) {
  for (const direct of r % 2 === 0 ? [true, false] : [false, true]) {
    const ms = await round(direct);
    (by[direct ? 'direct' : 'public'] as number[]).push(summarize(ms).p50);
  }
}
const rows = Object.entries(by).map(([path, p50s]) => ({
  path,
  'p50 ms per round': p50s.map((v) => v.toFixed(3)).join(' '),
  'median of rounds ms': summarize(p50s).p50,
}));
printTable(`Stateless MCP: direct dispatch against the SDK's public path (${calls} calls a round)`, rows);
writeResult('stateless-dispatch', { calls, rounds, rows, by });

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { StatelessMcp } from '../../../../src/server/transports/http/mcp-stateless.js';
import { postJson } from '../../../helpers/http-server.js';

// A real SDK McpServer with one tool behind our stateless transport, on a real HTTP server.
let http: Server;
let mcp: StatelessMcp;
let url: string;
const accept = { accept: 'application/json, text/event-stream' };
const call = (id: number, args: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'echo', arguments: args },
});

beforeAll(async () => {
  const server = new McpServer({ name: 't', version: '0' });
  server.registerTool(
    'echo',
    { inputSchema: { text: z.string() }, outputSchema: { text: z.string() } },
    ({ text }) => ({ content: [{ type: 'text', text }], structuredContent: { text } }),
  );
  mcp = new StatelessMcp(server, 30_000);
  http = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => void mcp.handle(req, res, JSON.parse(raw)));
  });
  await new Promise<void>((ok) => http.listen(0, '127.0.0.1', ok));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await mcp.close();
  await new Promise((ok) => http.close(ok));
});

describe('stateless MCP transport', () => {
  it('hands requests to the pinned SDK request path directly (no failing zod guards per call)', () => {
    // If an SDK upgrade drops Protocol._onrequest, calls still work through onmessage but pay ≈ 0.15 ms
    // more each: this makes that visible instead of silent.
    expect(mcp.directDispatch).toBe(true);
  });

  it('answers tool calls, with the SDK still validating arguments and output', async () => {
    const ok = await postJson(url, call(7, { text: 'hi' }), accept);
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ id: 7, result: { structuredContent: { text: 'hi' } } });

    const bad = await postJson(url, call(8, { text: 42 }), accept);
    expect(bad.status).toBe(200);
    const answer = bad.json as unknown as {
      id: number;
      result: { isError: boolean; content: Array<{ text: string }> };
    };
    const result = answer.result;
    expect(answer.id).toBe(8);
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toMatch(/Invalid arguments for tool echo/);
  });

  it('answers an unknown method with a JSON-RPC error rather than leaving the POST open', async () => {
    const r = await postJson(url, { jsonrpc: '2.0', id: 9, method: 'no/such' }, accept);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: 9, error: { code: -32601 } });
  });

  it('refuses positional (array) params, which MCP has no schema for and the SDK would never answer', async () => {
    const r = await postJson(url, { jsonrpc: '2.0', id: 10, method: 'tools/call', params: ['echo'] }, accept);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: { code: -32700 } });
  });

  it('answers a request named notifications/cancelled (it has an id) and keeps no entry for it', async () => {
    // the outside probe's message: no reply within 150 s, and 20k of them retained ≈ 400 MB
    const msg = { jsonrpc: '2.0', id: 1, method: 'notifications/cancelled', params: { requestId: 1 } };
    const r = await postJson(url, msg, accept);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: 1, error: { code: -32601 } });
    for (let i = 0; i < 50; i++) await postJson(url, { ...msg, id: i }, accept);
    expect(mcp.pendingCount).toBe(0);
  });

  it('still takes a cancellation notification (no id) with 202 and no body', async () => {
    const r = await postJson(
      url,
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
      accept,
    );
    expect(r.status).toBe(202);
    expect(mcp.pendingCount).toBe(0);
  });
});

describe('stateless MCP answer bound', () => {
  it('answers a request the server never answers with an error once its time is up, and forgets it', async () => {
    const server = new McpServer({ name: 'slow', version: '0' });
    let release: () => void = () => undefined;
    server.registerTool('hang', { inputSchema: {} }, () => new Promise((ok) => (release = () => ok({ content: [] }))));
    const slow = new StatelessMcp(server, 300);
    const h = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => void slow.handle(req, res, JSON.parse(raw)));
    });
    await new Promise<void>((ok) => h.listen(0, '127.0.0.1', ok));
    try {
      const u = `http://127.0.0.1:${(h.address() as AddressInfo).port}`;
      const r = await postJson(
        u,
        { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'hang', arguments: {} } },
        accept,
      );
      expect(r.json).toMatchObject({ id: 'a', error: { code: -32001 } });
      expect(slow.pendingCount).toBe(0);
      release(); // the late answer finds nothing waiting and is dropped
    } finally {
      await slow.close();
      await new Promise((ok) => h.close(ok));
    }
  });
});

import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ServerPool } from '../../../src/server/mcp/server-pool.js';

// The pool behind 2026-07-28 exchanges over HTTP, with the SDK's own per-request handler:
// instances are reused once an exchange closes, and a reused one answers only its own request.
const V = '2026-07-28';

function harness(settled: () => number | undefined = () => 1) {
  let made = 0;
  const release: Array<() => void> = [];
  const pool = new ServerPool(() => {
    made++;
    const server = new McpServer({ name: 'pool-test', version: '0' });
    server.registerTool('echo', { inputSchema: z.object({ tag: z.string() }) }, ({ tag }) => ({
      content: [{ type: 'text' as const, text: `echo ${tag}` }],
    }));
    // answers only when the test says so
    server.registerTool('slow', { inputSchema: z.object({ tag: z.string() }) }, async ({ tag }) => {
      await new Promise<void>((resolve) => release.push(resolve));
      return { content: [{ type: 'text' as const, text: `slow ${tag}` }] };
    });
    return server;
  }, settled);
  const handler = createMcpHandler(() => pool.take(), { legacy: 'reject' });
  let id = 0;
  const call = async (tool: string, tag: string, signal?: AbortSignal): Promise<Response> => {
    const body = {
      jsonrpc: '2.0',
      id: ++id,
      method: 'tools/call',
      params: {
        name: tool,
        arguments: { tag },
        _meta: { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': {} },
      },
    };
    const request = new Request('http://localhost/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V,
        'mcp-method': 'tools/call',
        'mcp-name': tool,
      },
      ...(signal ? { signal } : {}),
    });
    return handler.fetch(request, { parsedBody: body });
  };
  const text = async (r: Response): Promise<{ id: number; text: string }> => {
    const raw = await r.text();
    const json = raw.startsWith('{') ? raw : (raw.split('\n').find((l) => l.startsWith('data: ')) ?? '').slice(6);
    const a = JSON.parse(json) as { id: number; result: { content: Array<{ text: string }> } };
    return { id: a.id, text: a.result.content[0]?.text ?? '' };
  };
  return { pool, handler, call, text, release, made: () => made };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

describe('ServerPool', () => {
  it('reuses one instance for calls one after another, each answered as its own', async () => {
    const h = harness();
    for (let i = 0; i < 5; i++) {
      const a = await h.text(await h.call('echo', `t${i}`));
      expect(a.text).toBe(`echo t${i}`);
      await settle();
    }
    expect(h.made()).toBe(1);
    expect(h.pool.size).toBe(1);
    await h.handler.close();
  });

  it('makes one instance per exchange in flight, then keeps them all', async () => {
    const h = harness();
    const answers = await Promise.all(['a', 'b', 'c'].map(async (t) => h.text(await h.call('echo', t))));
    expect(answers.map((a) => a.text).sort()).toEqual(['echo a', 'echo b', 'echo c']);
    await settle();
    expect(h.made()).toBe(3);
    expect(h.pool.size).toBe(3);
    await h.handler.close();
  });

  it('keeps nothing while the corpora are not ready: before the first build ends, or once withdrawn', async () => {
    let ready = false;
    const h = harness(() => (ready ? 1 : undefined));
    const served = async (t: string) => {
      expect((await h.text(await h.call('echo', t))).text).toBe(`echo ${t}`);
      await settle();
    };
    await served('a');
    await served('b');
    expect([h.made(), h.pool.size]).toEqual([2, 0]);
    ready = true;
    await served('c');
    await served('d');
    expect([h.made(), h.pool.size]).toEqual([3, 1]);
    ready = false; // a damaged file withdrew the corpora
    await served('e');
    expect([h.made(), h.pool.size]).toEqual([4, 0]);
    await h.handler.close();
  });

  it("drops what it kept when another generation of corpora is published (a folder's update)", async () => {
    let generation = 1;
    const h = harness(() => generation);
    const served = async (t: string) => {
      expect((await h.text(await h.call('echo', t))).text).toBe(`echo ${t}`);
      await settle();
    };
    await served('a');
    await served('b');
    expect([h.made(), h.pool.size]).toEqual([1, 1]);
    generation = 2;
    await served('c');
    expect([h.made(), h.pool.size]).toEqual([2, 1]);
    // an instance of generation 1 still answering when 2 came is not shelved once it closes
    const slow = h.call('slow', 's');
    await settle();
    generation = 3;
    await served('d');
    h.release.shift()?.();
    expect((await h.text(await slow)).text).toBe('slow s');
    await settle();
    expect(h.pool.size).toBe(1);
    await h.handler.close();
  });

  it('a request whose client left: its late answer never reaches the next request on the instance', async () => {
    const h = harness();
    const gone = new AbortController();
    const first = h.call('slow', 'left', gone.signal).catch((err: unknown) => err);
    while (h.release.length === 0) await settle();
    gone.abort();
    await first;
    await settle();
    // the exchange closed with its client: the instance is back on the shelf, its handler still running
    expect(h.pool.size).toBe(1);
    const second = h.call('slow', 'next');
    while (h.release.length < 2) await settle();
    expect(h.made()).toBe(1);
    // the abandoned handler answers first, then the live one
    h.release[0]?.();
    await settle();
    h.release[1]?.();
    const a = await h.text(await second);
    expect(a).toEqual({ id: 2, text: 'slow next' });
    await h.handler.close();
  });
});

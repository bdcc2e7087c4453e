import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { TOOL_VERSION } from '../../../src/version.js';
import { describe, expect, it } from 'vitest';
import { createServer } from '../../../src/server/mcp/create-server.js';
import { RetrieverSlot } from '../../../src/server/mcp/retriever-slot.js';

const OPTS = { topK: 3, maxTopK: 100, maxQueryChars: 8192, candidates: 100, rrfK: 60, weights: { bm25: 1, dense: 1 } };

async function connect(slot: RetrieverSlot): Promise<Client> {
  const { server } = createServer({ retriever: slot, maxBatchQueries: 16 });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'slot-test', version: '0' });
  await client.connect(b);
  return client;
}

describe('tools before the corpora are open', () => {
  it('list the tools, report each corpus state, and refuse searches with it, with progress when asked', async () => {
    const slot = new RetrieverSlot(OPTS, ['multihop']);
    slot.update({ name: 'multihop', state: 'building', phase: 'embed multihop', percent: 42.4, eta_seconds: 95 });
    const client = await connect(slot);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['batch_search', 'fetch', 'list_corpora', 'search']);
    const lc = await client.callTool({ name: 'list_corpora', arguments: {} });
    expect(lc.structuredContent).toEqual({
      version: TOOL_VERSION,
      corpora: [
        { name: 'multihop', status: { state: 'building', phase: 'embed multihop', percent: 42.4, eta_seconds: 95 } },
      ],
    });
    const progress: Array<{ progress: number; total?: number; message?: string }> = [];
    const r = (await client.callTool({ name: 'search', arguments: { query: 'chip' } }, undefined, {
      onprogress: (p) => progress.push(p),
    })) as { isError?: boolean; content: Array<{ text: string }> };
    expect(r.isError).toBe(true);
    expect(r.content[0]?.text).toMatch(
      /not ready yet: corpus multihop is building \(first run\): embed multihop 42% done, about 1m35s left/,
    );
    expect(progress).toEqual([
      {
        progress: 42.4,
        total: 100,
        message: 'corpus multihop is building (first run): embed multihop 42% done, about 1m35s left',
      },
    ]);
    const f = (await client.callTool({ name: 'fetch', arguments: { id: 'x' } })) as { isError?: boolean };
    expect(f.isError).toBe(true);
    slot.fail(new Error('the download failed'));
    const after = (await client.callTool({ name: 'search', arguments: { query: 'chip' } })) as {
      content: Array<{ text: string }>;
    };
    expect(after.content[0]?.text).toMatch(/could not be opened: the download failed/);
    await client.close();
  });
});

describe('a slot withdrawn after it served', () => {
  it('stops answering with the damage named, and a late open does not bring it back', async () => {
    const slot = new RetrieverSlot(OPTS, ['multihop']);
    slot.withdraw(new Error('chunks.sqlite does not match its checksum in manifest.json (64 MiB block 3)'));
    expect(slot.ready).toBe(false);
    expect(slot.failed).toBe(true);
    expect(slot.list()).toEqual([
      {
        name: 'multihop',
        state: 'failed',
        error: 'chunks.sqlite does not match its checksum in manifest.json (64 MiB block 3)',
      },
    ]);
    const client = await connect(slot);
    const r = (await client.callTool({ name: 'search', arguments: { query: 'chip' } })) as {
      isError?: boolean;
      content: Array<{ text: string }>;
    };
    expect(r.isError).toBe(true);
    expect(r.content[0]?.text).toMatch(/no longer serving: chunks\.sqlite does not match its checksum/);
    // the open that raced the check finishing late must not re-enable the damaged corpora
    slot.set({ opts: OPTS, corpora: [] } as unknown as Parameters<RetrieverSlot['set']>[0]);
    expect(slot.ready).toBe(false);
    await client.close();
  });
});

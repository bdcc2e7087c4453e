import { join } from 'node:path';
import { bm25BuildArgs, writeJsonl } from './build.js';
import { startHttpServer, type RunningServer } from './http-server.js';
import { runBin } from './mcp.js';
import { BIN } from './paths.js';

/**
 * The 30-paragraph corpus "c" the outside-client tests search ("kings of
 * paragraph 4" ranks c4 first), built by the real CLI under `dir` and served
 * over HTTP behind the bearer token `token`.
 */
export async function serveClientCorpus(dir: string, token: string): Promise<{ indexDir: string; srv: RunningServer }> {
  const indexDir = join(dir, 'indexes');
  const input = writeJsonl(
    dir,
    'c.jsonl',
    Array.from({ length: 30 }, (_, i) => ({
      id: `c${i}`,
      contents: `"Topic ${i}"\nParagraph ${i} is about ${['rivers', 'kings', 'films'][i % 3]} and the number ${i * 7}.`,
    })),
  );
  const r = runBin(BIN.build, bm25BuildArgs('c', input, indexDir));
  if (r.status !== 0) throw new Error(`build-index failed (${r.status}): ${r.stderr}`);
  const srv = await startHttpServer(['--corpus', 'c', '--index-dir', indexDir], { RETRIEVER_MCP_TOKEN: token });
  return { indexDir, srv };
}

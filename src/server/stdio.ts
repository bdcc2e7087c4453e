import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Retriever } from '../search/retriever.js';
import type { Logger } from '../util/log.js';
import { createServer } from './create-server.js';
import type { Guard } from './tool-context.js';

/** Serves MCP over stdin/stdout until stdin closes or a signal arrives. */
export async function serveStdio(
  retriever: Retriever,
  maxBatchQueries: number,
  guard: Guard,
  log: Logger,
): Promise<void> {
  const { server, close } = createServer({ retriever, maxBatchQueries, guard });
  const transport = new StdioServerTransport();
  let closing = false;
  const shutdown = async (why: string): Promise<void> => {
    if (closing) return;
    closing = true;
    log.info(`shutting down (${why})`);
    await close();
    await retriever.close();
  };
  await new Promise<void>((resolve) => {
    const done = (why: string) => () => void shutdown(why).then(resolve);
    process.stdin.once('end', done('stdin closed'));
    process.once('SIGINT', done('SIGINT'));
    process.once('SIGTERM', done('SIGTERM'));
    transport.onclose = done('transport closed');
    void server.connect(transport).then(() => {
      log.info(`serving ${retriever.corpora.map((c) => c.name).join(', ')} over stdio`);
    });
  });
}

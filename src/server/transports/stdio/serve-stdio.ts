import { serveStdio as serveMcpStdio } from '@modelcontextprotocol/server/stdio';
import type { RetrieverSlot } from '../../mcp/retriever-slot.js';
import type { Logger } from '../../../util/log.js';
import { createServer } from '../../mcp/create-server.js';
import { StdioTransport } from './stdio-transport.js';
import type { Guard } from '../../mcp/tool-context.js';
import type { AnswerBudget } from '../../admission.js';
import { AnswerSizer } from '../../answer-size.js';

/** How long answers to requests read before stdin ended may take to go out, ms. */
const DRAIN_MS = 30_000;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** The SDK's own line limit, kept: a larger message is refused, not the session ended. */
const MAX_LINE_BYTES = 10 * 2 ** 20;

/**
 * Serves MCP over stdin/stdout until stdin closes or a signal arrives;
 * `beforeClose` runs first on the way out (it stops a first-run build and
 * waits for it to let go of its lock). The SDK's `serveStdio` decides the
 * protocol era from the opening message (`server/discover` or a request with
 * the 2026-07-28 `_meta` envelope: stateless; `initialize`: a 2025 session)
 * and pins one server instance for the connection; the transport is ours
 * (stdio-transport.ts says why).
 */
export async function serveStdio(
  slot: RetrieverSlot,
  tools: { maxBatchQueries: number; resourceLinks: boolean },
  guard: Guard,
  log: Logger,
  limits: { maxPending: number; answers: AnswerBudget },
  beforeClose: (why: string) => Promise<void> = async () => {},
  /** Runs once the server is serving and has said so (a first run's build starts here). */
  onServing: () => void = () => {},
): Promise<void> {
  const sizer = new AnswerSizer(slot);
  const transport = new StdioTransport(process.stdin, process.stdout, {
    maxLineBytes: MAX_LINE_BYTES,
    maxPending: limits.maxPending,
    warn: (m) => log.warn(m),
    answerLease: (request) => limits.answers.tryReserve(sizer.mcp(request)),
  });
  let closing: Promise<void> | undefined;
  const shutdown = (why: string): Promise<void> =>
    (closing ??= (async () => {
      log.info(`shutting down (${why})`);
      // answers to requests already read still go out (bounded: a search has its deadline anyway)
      if (why === 'stdin closed') await Promise.race([transport.idle(), delay(DRAIN_MS)]);
      await beforeClose(why);
      await handle.close();
      await slot.current()?.close();
    })());
  const handle = serveMcpStdio(() => createServer({ retriever: slot, ...tools, guard }).server, {
    transport,
    onerror: (err) => log.debug(`mcp: ${err.message}`),
  });
  log.info(
    `serving ${slot.names.join(', ')} over stdio${slot.ready ? '' : ' (tools answer "not ready" until the first-run build ends)'}`,
  );
  onServing();
  await new Promise<void>((resolve) => {
    const done = (why: string) => () => void shutdown(why).then(resolve);
    process.stdin.once('end', done('stdin closed'));
    process.once('SIGINT', done('SIGINT'));
    process.once('SIGTERM', done('SIGTERM'));
    void transport.whenClosed().then(done('transport closed'));
  });
}

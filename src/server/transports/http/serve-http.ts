import type { Server } from 'node:http';
import type { Retriever } from '../../../search/retriever.js';
import type { RetrieverSlot } from '../../mcp/retriever-slot.js';
import { describeError, isRetrieverError } from '../../../errors.js';
import { createHttpApp, type HttpAppOptions } from './http-app.js';

/** How long a stopping server keeps answering 503 + "Connection: close" on open connections, at least, ms. */
const DRAIN_GRACE_MS = 1000;

export interface ServeHttpOptions extends HttpAppOptions {
  host: string;
  port: number;
  /** Opens indexes and encoders; runs after the port is open so /health answers during load. */
  load: () => Promise<Retriever>;
  /** Stops what `load` runs (a first-run build) when a signal comes first, and what `onReady` started; `load` then rejects. */
  stopLoad?: (why: string) => void | Promise<void>;
  /** Runs once the loaded retriever serves (after its warm-up). */
  onReady?: () => void;
  /** Filled by the loaded retriever; MCP answers initialize and tools/list from it before that. */
  slot: RetrieverSlot;
  /** How long SIGTERM waits for in-flight requests, ms. */
  drainMs: number;
}

/**
 * Serves over HTTP until SIGTERM/SIGINT: listens at once (liveness), loads and
 * warms indexes and encoders, then reports ready. On a signal it stops
 * accepting, lets in-flight requests finish (up to drainMs) and resolves.
 */
export async function serveHttp(opts: ServeHttpOptions): Promise<void> {
  const app = createHttpApp(opts);
  const { server, admission } = app;
  await listen(server, opts.host, opts.port);
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  // an IPv6 address is bracketed in a URL (http://[::]:8099, not http://:::8099)
  const host = opts.host.includes(':') && !opts.host.startsWith('[') ? `[${opts.host}]` : opts.host;
  opts.log.info(
    `listening on http://${host}:${port} (MCP /mcp and /sse, REST /retrieve /search /batch_search, /health /ready /metrics)`,
  );

  let stop: (why: string) => void = () => {};
  const stopped = new Promise<string>((resolve) => (stop = resolve));
  const onTerm = (): void => stop('SIGTERM');
  const onInt = (): void => stop('SIGINT');
  process.once('SIGTERM', onTerm);
  process.once('SIGINT', onInt);

  const loading = opts.load();
  let loaded: Retriever | undefined;
  try {
    loaded = await Promise.race([loading, stopped.then(() => undefined)]);
    if (loaded) {
      const t0 = performance.now();
      await warmUp(loaded);
      app.attach(loaded);
      opts.log.info(`ready (warm-up ${((performance.now() - t0) / 1000).toFixed(1)}s)`);
      opts.onReady?.();
    }
  } catch (err) {
    opts.slot.fail(err as Error);
    server.close();
    server.closeAllConnections();
    // nothing may keep a server that failed to start alive: its corpora (their threads) and the
    // signal handlers (a SIGTERM it caught and then ignored left it running for good)
    await loaded?.close().catch(() => undefined);
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onInt);
    throw err;
  }

  const why = await stopped;
  // a signal during the load (a first-run build): stop it and wait until it lets go of its lock
  await opts.stopLoad?.(why);
  const late = await loading.catch((err: unknown) => {
    if (isRetrieverError(err, 'STOPPED')) opts.log.info(describeError(err));
    else opts.log.warn(`the load ended with: ${describeError(err)}`);
    return undefined;
  });
  // loaded but never attached (the signal came first): nothing else will close it
  if (late && !loaded) await late.close();
  opts.log.info(`${why}: draining ${admission.inFlight} in-flight request(s), refusing new ones`);
  // Keep the port and idle keep-alive connections open a moment: a client that sends on one just
  // after the signal gets a 503 with "Connection: close" instead of a silent FIN or a reset.
  app.startDraining();
  const grace = new Promise<void>((r) => setTimeout(r, DRAIN_GRACE_MS).unref());
  const drained = await Promise.race([
    Promise.all([admission.drain(), grace]).then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), Math.max(opts.drainMs, DRAIN_GRACE_MS)).unref()),
  ]);
  if (!drained) opts.log.warn(`gave up waiting for in-flight requests after ${opts.drainMs} ms`);
  server.close();
  await app.mcp()?.closeAll();
  server.closeAllConnections();
  await app.retriever()?.close();
  opts.log.info('stopped');
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (err) => reject(new Error(`cannot listen on ${host}:${port}: ${describeError(err)}`)));
    server.listen(port, host, () => resolve());
  });
}

/**
 * One query per corpus and mode: JIT, page cache and encoder are hot before /ready says so. A
 * corpus served without its encoder warms its dense arm with a query vector, and skips hybrid.
 */
async function warmUp(r: Retriever): Promise<void> {
  for (const c of r.corpora) {
    const encoded = r.hasEncoder(c.name);
    const dim = c.manifest.dense?.encoder.dim ?? 0;
    for (const mode of c.modes) {
      if (mode === 'bm25' || encoded) {
        await r.search({ query: 'warm up the retrieval indexes', topK: 10, mode, corpus: c.name });
      } else if (mode === 'dense' && c.kind === 'local') {
        const unit = Array.from({ length: dim }, (_, i) => (i === 0 ? 1 : 0));
        await r.search({ query: '', vectors: [unit], topK: 10, mode, corpus: c.name });
      }
    }
  }
}

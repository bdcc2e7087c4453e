import type { Server } from 'node:http';
import type { Retriever } from '../search/retriever.js';
import { describeError } from '../errors.js';
import type { Logger } from '../util/log.js';
import { Admission, type AdmissionOptions } from './admission.js';
import { createServer } from './create-server.js';
import { createHttpServer, type HttpOptions } from './http.js';
import { McpHttp, type McpHttpOptions } from './mcp-http.js';
import type { ServerMetrics } from './metrics.js';
import type { RestContext } from './rest.js';

export interface ServeHttpOptions {
  host: string;
  port: number;
  http: HttpOptions;
  admission: AdmissionOptions;
  mcp: McpHttpOptions;
  maxBatchQueries: number;
  metrics: ServerMetrics;
  log: Logger;
  /** Opens indexes and encoders; runs after the port is open so /health answers during load. */
  load: () => Promise<Retriever>;
  /** How long SIGTERM waits for in-flight requests, ms. */
  drainMs: number;
}

/**
 * Serves over HTTP until SIGTERM/SIGINT: listens at once (liveness), loads and
 * warms indexes and encoders, then reports ready. On a signal it stops
 * accepting, lets in-flight requests finish (up to drainMs) and resolves.
 */
export async function serveHttp(opts: ServeHttpOptions): Promise<void> {
  const admission = new Admission(opts.admission, (n) => opts.metrics.inFlight.set(n));
  const guard = <T>(work: () => Promise<T>): Promise<T> => admission.run(work);
  let retriever: Retriever | undefined;
  let mcp: McpHttp | undefined;
  let rest: RestContext | undefined;
  const server = createHttpServer(
    { retriever: () => retriever, mcp: () => mcp, rest: () => rest, admission, metrics: opts.metrics, log: opts.log },
    opts.http,
  );
  await listen(server, opts.host, opts.port);
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  opts.log.info(
    `listening on http://${opts.host}:${port} (MCP /mcp and /sse, REST /retrieve /search /batch_search, /health /ready /metrics)`,
  );

  let stop: (why: string) => void = () => {};
  const stopped = new Promise<string>((resolve) => (stop = resolve));
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));

  try {
    const loaded = await Promise.race([opts.load(), stopped.then(() => undefined)]);
    if (loaded) {
      const t0 = performance.now();
      await warmUp(loaded);
      retriever = loaded;
      rest = { retriever: loaded, guard, maxBatchQueries: opts.maxBatchQueries };
      mcp = new McpHttp(
        () => createServer({ retriever: loaded, maxBatchQueries: opts.maxBatchQueries, guard }).server,
        opts.mcp,
        opts.log,
      );
      opts.log.info(`ready (warm-up ${((performance.now() - t0) / 1000).toFixed(1)}s)`);
    }
  } catch (err) {
    server.close();
    server.closeAllConnections();
    throw err;
  }

  const why = await stopped;
  opts.log.info(`${why}: draining ${admission.inFlight} in-flight request(s), refusing new ones`);
  server.close();
  server.closeIdleConnections();
  const drained = await Promise.race([
    admission.drain().then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), opts.drainMs).unref()),
  ]);
  if (!drained) opts.log.warn(`gave up waiting for in-flight requests after ${opts.drainMs} ms`);
  await mcp?.closeAll();
  server.closeAllConnections();
  await retriever?.close();
  opts.log.info('stopped');
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (err) => reject(new Error(`cannot listen on ${host}:${port}: ${describeError(err)}`)));
    server.listen(port, host, () => resolve());
  });
}

/** One query per corpus and mode: JIT, page cache and encoder are hot before /ready says so. */
async function warmUp(r: Retriever): Promise<void> {
  for (const c of r.corpora) {
    for (const mode of c.modes)
      await r.search({ query: 'warm up the retrieval indexes', topK: 10, mode, corpus: c.name });
  }
}

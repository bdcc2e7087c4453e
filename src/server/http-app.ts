import type { Server } from 'node:http';
import type { Retriever } from '../search/retriever.js';
import type { Logger } from '../util/log.js';
import { Admission, type AdmissionOptions } from './admission.js';
import { createServer } from './create-server.js';
import { createHttpServer, type HttpOptions } from './http.js';
import { McpHttp, type McpHttpOptions } from './mcp-http.js';
import type { ServerMetrics } from './metrics.js';
import type { RestContext } from './rest.js';

export interface HttpAppOptions {
  http: HttpOptions;
  admission: AdmissionOptions;
  mcp: McpHttpOptions;
  maxBatchQueries: number;
  metrics: ServerMetrics;
  log: Logger;
}

export interface HttpApp {
  server: Server;
  admission: Admission;
  /** Starts serving a loaded retriever; until then every search route answers 503 NOT_READY. */
  attach(retriever: Retriever): void;
  mcp(): McpHttp | undefined;
  retriever(): Retriever | undefined;
}

/** The HTTP server with its admission control, MCP sessions and REST routes, wired together. */
export function createHttpApp(opts: HttpAppOptions): HttpApp {
  const admission = new Admission(opts.admission, (n) => opts.metrics.inFlight.set(n));
  const guard = <T>(work: () => Promise<T>): Promise<T> => admission.run(work);
  let retriever: Retriever | undefined;
  let mcp: McpHttp | undefined;
  let rest: RestContext | undefined;
  const server = createHttpServer(
    { retriever: () => retriever, mcp: () => mcp, rest: () => rest, admission, metrics: opts.metrics, log: opts.log },
    opts.http,
  );
  return {
    server,
    admission,
    mcp: () => mcp,
    retriever: () => retriever,
    attach(r: Retriever) {
      rest = { retriever: r, guard, maxBatchQueries: opts.maxBatchQueries };
      mcp = new McpHttp(
        () => createServer({ retriever: r, maxBatchQueries: opts.maxBatchQueries, guard }).server,
        opts.mcp,
        opts.log,
      );
      retriever = r;
    },
  };
}

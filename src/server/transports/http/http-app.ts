import type { Server } from 'node:http';
import type { Retriever } from '../../../search/retriever.js';
import type { Logger } from '../../../util/log.js';
import { Admission, type AdmissionOptions, type AnswerBudget } from '../../admission.js';
import { AnswerSizer } from '../../answer-size.js';
import { createServer } from '../../mcp/create-server.js';
import { describeState, type RetrieverSlot } from '../../mcp/retriever-slot.js';
import { withdrawOnDamage } from '../../mcp/tool-context.js';
import type { ConnectionStats } from './connections.js';
import { createHttpServer, type HttpOptions } from './router.js';
import { McpHttp, type McpHttpOptions } from './mcp-http.js';
import type { ServerMetrics } from '../../server-metrics.js';

export interface HttpAppOptions {
  http: HttpOptions;
  admission: AdmissionOptions;
  /** Memory the answers in flight may hold between them. */
  answers: AnswerBudget;
  mcp: McpHttpOptions;
  maxBatchQueries: number;
  resourceLinks?: boolean;
  metrics: ServerMetrics;
  log: Logger;
  /** The retriever to come: MCP sessions start on it at once, and answer "not ready" until it is filled. */
  slot: RetrieverSlot;
}

export interface HttpApp {
  server: Server;
  admission: Admission;
  connections: ConnectionStats;
  /** From a stop signal on: searches get 503 and every answer closes its connection. */
  startDraining(): void;
  /** Starts serving a loaded retriever; until then every search route answers 503 NOT_READY. */
  attach(retriever: Retriever): void;
  mcp(): McpHttp | undefined;
  retriever(): Retriever | undefined;
}

/** The HTTP server with its admission control, MCP sessions and REST routes, wired together. */
export function createHttpApp(opts: HttpAppOptions): HttpApp {
  const admission = new Admission(opts.admission, (n) => opts.metrics.inFlight.set(n));
  const guard = withdrawOnDamage(opts.slot, opts.log, (work) => admission.run(work));
  let retriever: Retriever | undefined;
  const answers = { budget: opts.answers, sizer: new AnswerSizer(opts.slot) };
  // MCP is up from the start, so a first run's initialize and tools/list are answered during the build
  const mcp = new McpHttp(
    () =>
      createServer({
        retriever: opts.slot,
        maxBatchQueries: opts.maxBatchQueries,
        resourceLinks: opts.resourceLinks ?? false,
        guard,
      }).server,
    opts.mcp,
    opts.log,
    answers,
    () => opts.slot.generation,
  );
  let draining = false;
  const { server, connections } = createHttpServer(
    {
      // the slot's, not `retriever`: the slot withdraws it if a checksum fails while serving
      retriever: () => opts.slot.current(),
      readiness: () => (opts.slot.ready ? 'ready' : opts.slot.list().map(describeState).join('; ')),
      failed: () => opts.slot.failed,
      mcp: () => mcp,
      // the slot's current retriever: a folder's update replaces it while serving
      rest: () =>
        opts.slot.ready ? { retriever: opts.slot.get(), guard, maxBatchQueries: opts.maxBatchQueries } : undefined,
      admission,
      answers,
      metrics: opts.metrics,
      log: opts.log,
      draining: () => draining,
    },
    opts.http,
  );
  opts.metrics.connections.collect = () => [[{}, connections.open]];
  opts.metrics.evictedConnections.source = () => connections.evicted;
  opts.metrics.sessions.collect = () => [[{}, mcp.sessionCount]];
  return {
    server,
    admission,
    connections,
    startDraining: () => {
      draining = true;
    },
    mcp: () => mcp,
    // what serves now: a first build's text phase before the load ends, and a folder's update
    // replaces the one attached
    retriever: () => opts.slot.current() ?? retriever,
    attach(r: Retriever) {
      opts.slot.set(r);
      retriever = r;
    },
  };
}

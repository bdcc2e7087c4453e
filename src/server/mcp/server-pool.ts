import type { McpServer } from '@modelcontextprotocol/server';

/**
 * Idle MCP server instances for stateless exchanges (a 2026-07-28 request is one).
 * The SDK serves each such request on an instance from a factory and tears it down
 * once answered; building one (tools registered, their schemas converted) was a
 * fifth of a 2026 call's cost over HTTP. An instance whose exchange has closed is
 * disconnected, and everything the SDK sets for an exchange (negotiated revision,
 * the client's `_meta` identity, the discover handler) is set again by the next, so
 * it goes back on the shelf instead. Only instances made once the corpora are
 * ready are kept, and none while they are not (a first run's build, or corpora
 * withdrawn after damage): tool lists and cache hints differ then.
 */
export class ServerPool {
  private readonly idle: McpServer[] = [];

  constructor(
    private readonly make: () => McpServer,
    /** Whether an instance made now would stay right for later requests. */
    private readonly settled: () => boolean,
    private readonly max = 64,
  ) {}

  /** An idle instance, or a new one; it comes back here when its exchange closes. */
  take(): McpServer {
    if (!this.settled()) {
      // not ready yet, or withdrawn after damage: what was kept would say otherwise
      this.idle.length = 0;
      return this.make();
    }
    return this.idle.pop() ?? this.fresh();
  }

  get size(): number {
    return this.idle.length;
  }

  /** Drops the idle instances (a server shutting down). */
  clear(): void {
    this.idle.length = 0;
  }

  private fresh(): McpServer {
    const server = this.make();
    // The SDK chains its own exchange hook in front of this one and restores it afterwards;
    // the protocol layer has let go of the transport by the time it runs.
    // Once on the shelf, never twice: two requests must not be handed the same instance.
    server.server.onclose = () => {
      if (this.idle.length >= this.max || server.server.transport !== undefined) return;
      if (!this.idle.includes(server)) this.idle.push(server);
    };
    return server;
  }
}

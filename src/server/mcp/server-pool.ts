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
  /** The generation of the served corpora the idle instances were made for. */
  private generation: number | undefined;
  private readonly madeFor = new WeakMap<McpServer, number>();

  constructor(
    private readonly make: () => McpServer,
    /**
     * The generation of what is served (it changes when a folder's update is published), or
     * undefined while an instance made now would not stay right (not ready, partly built, withdrawn).
     */
    private readonly settled: () => number | undefined,
    private readonly max = 64,
  ) {}

  /** An idle instance, or a new one; it comes back here when its exchange closes. */
  take(): McpServer {
    const generation = this.settled();
    if (generation !== this.generation) {
      // what was kept was made for other corpora (or none): its tool lists and hints would say otherwise
      this.idle.length = 0;
      this.generation = generation;
    }
    if (generation === undefined) return this.make();
    return this.idle.pop() ?? this.fresh(generation);
  }

  get size(): number {
    return this.idle.length;
  }

  /** Drops the idle instances (a server shutting down). */
  clear(): void {
    this.idle.length = 0;
  }

  private fresh(generation: number): McpServer {
    const server = this.make();
    this.madeFor.set(server, generation);
    // The SDK chains its own exchange hook in front of this one and restores it afterwards;
    // the protocol layer has let go of the transport by the time it runs.
    // Once on the shelf, never twice: two requests must not be handed the same instance.
    server.server.onclose = () => {
      if (this.idle.length >= this.max || server.server.transport !== undefined) return;
      if (this.madeFor.get(server) !== this.generation) return;
      if (!this.idle.includes(server)) this.idle.push(server);
    };
    return server;
  }
}

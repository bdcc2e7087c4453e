import type { McpServer, Transport } from '@modelcontextprotocol/server';
import type { Logger } from '../../../util/log.js';

export interface SessionLimits {
  /** Sessions idle longer than this are closed, ms. */
  ttlMs: number;
  /** Open sessions at most (≈ 150 KB each: an McpServer with its tools). */
  max: number;
}

export interface Session<T extends Transport = Transport> {
  transport: T;
  server: McpServer;
  lastUsed: number;
}

/**
 * The open MCP sessions of both HTTP transports (Streamable HTTP and legacy
 * SSE): capped, swept for idleness every min(60 s, TTL), closed together on
 * shutdown. Session ids are ours (UUIDs), never a client's string.
 */
export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    readonly limits: SessionLimits,
    private readonly log: Logger,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, limits.ttlMs)).unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  get full(): boolean {
    return this.sessions.size >= this.limits.max;
  }

  add(id: string, session: Session): void {
    this.sessions.set(id, session);
  }

  /** The session, marked as used now; undefined when unknown, expired, or of another transport. */
  use<T extends Transport>(id: string, kind: abstract new (...args: never[]) => T): Session<T> | undefined {
    const s = this.sessions.get(id);
    if (!s || !(s.transport instanceof kind)) return undefined;
    s.lastUsed = Date.now();
    return s as Session<T>;
  }

  forget(id: string): void {
    this.sessions.delete(id);
  }

  async close(id: string): Promise<void> {
    const s = this.sessions.get(id);
    if (!s) return;
    this.sessions.delete(id);
    try {
      await s.transport.close();
      await s.server.close();
    } catch (err) {
      this.log.debug(`closing session ${id}: ${(err as Error).message}`);
    }
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id)));
  }

  private sweep(): void {
    const cutoff = Date.now() - this.limits.ttlMs;
    for (const [id, s] of this.sessions) if (s.lastUsed < cutoff) void this.close(id);
  }
}

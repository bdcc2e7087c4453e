import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../util/log.js';
import { sendJson } from './http-util.js';
import { jsonRpcError, StatelessMcp } from './mcp-stateless.js';

export interface McpHttpOptions {
  /** Never issue session ids: every POST /mcp stands alone. */
  stateless: boolean;
  /** Sessions idle longer than this are closed, ms. */
  sessionTtlMs: number;
  maxSessions: number;
}

interface Session {
  transport: StreamableHTTPServerTransport | SSEServerTransport;
  server: McpServer;
  lastUsed: number;
}

/**
 * MCP over HTTP: Streamable HTTP at /mcp (sessions when a client initializes
 * one, stateless otherwise: a request without a session id is served on its
 * own, which suits RL clients that open a new connection per call) and the
 * legacy SSE transport at /sse + /messages. Stateless requests all go to one
 * long-lived McpServer through our own JSON transport (mcp-stateless.ts).
 */
export class McpHttp {
  private readonly sessions = new Map<string, Session>();
  private readonly stateless: StatelessMcp;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly makeServer: () => McpServer,
    private readonly opts: McpHttpOptions,
    private readonly log: Logger,
    answerWithinMs: number,
  ) {
    this.stateless = new StatelessMcp(makeServer(), answerWithinMs);
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, opts.sessionTtlMs)).unref();
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  get statelessPending(): number {
    return this.stateless.pendingCount;
  }

  async handleMcp(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const sid = header(req, 'mcp-session-id');
    if (sid !== undefined) {
      const s = this.sessions.get(sid);
      if (!s || !(s.transport instanceof StreamableHTTPServerTransport)) {
        sendJson(
          res,
          404,
          jsonRpcError(-32001, `unknown or expired session ${sid.slice(0, 64)}: initialize a new one`),
        );
        return;
      }
      s.lastUsed = Date.now();
      await s.transport.handleRequest(req, res, body);
      return;
    }
    if (
      !this.opts.stateless &&
      req.method === 'POST' &&
      isInitialize(body) &&
      this.sessions.size < this.opts.maxSessions
    ) {
      await this.startSession(req, res, body);
      return;
    }
    if (req.method !== 'POST') {
      sendJson(
        res,
        405,
        jsonRpcError(-32000, 'stateless MCP supports POST only; initialize a session for GET streams'),
        { allow: 'POST' },
      );
      return;
    }
    await this.stateless.handle(req, res, body);
  }

  /** GET /sse: opens a legacy SSE session; its messages arrive at POST /messages?sessionId=… */
  async handleSse(_req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.sessions.size >= this.opts.maxSessions) {
      sendJson(
        res,
        503,
        { error: { code: 'OVERLOADED', message: 'too many open sessions: retry shortly' } },
        { 'retry-after': '5' },
      );
      return;
    }
    const transport = new SSEServerTransport('/messages', res);
    const server = this.makeServer();
    const session: Session = { transport, server, lastUsed: Date.now() };
    this.sessions.set(transport.sessionId, session);
    transport.onclose = () => this.sessions.delete(transport.sessionId);
    res.on('close', () => void this.closeSession(transport.sessionId));
    await server.connect(transport);
  }

  async handleSseMessage(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const sid = new URL(req.url ?? '/', 'http://x').searchParams.get('sessionId') ?? '';
    const s = this.sessions.get(sid);
    if (!s || !(s.transport instanceof SSEServerTransport)) {
      sendJson(res, 404, {
        error: { code: 'NOT_FOUND', message: `unknown SSE session "${sid.slice(0, 64)}": open GET /sse first` },
      });
      return;
    }
    s.lastUsed = Date.now();
    await s.transport.handlePostMessage(req, res, body);
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.keys()].map((id) => this.closeSession(id)));
    await this.stateless.close();
  }

  private async startSession(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const server = this.makeServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        this.sessions.set(id, { transport, server, lastUsed: Date.now() });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  private async closeSession(id: string): Promise<void> {
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

  private sweep(): void {
    const cutoff = Date.now() - this.opts.sessionTtlMs;
    for (const [id, s] of this.sessions) if (s.lastUsed < cutoff) void this.closeSession(id);
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function isInitialize(body: unknown): boolean {
  const msgs = Array.isArray(body) ? body : [body];
  return msgs.some((m) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize');
}

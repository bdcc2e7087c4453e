import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../../util/log.js';
import { jsonRpcError, StatelessMcp } from './mcp-stateless.js';
import { openSseSession, postSseMessage } from './sse.js';
import { sendJson } from './http-util.js';
import { SessionRegistry } from './sessions.js';

export interface McpHttpOptions {
  /** Never issue session ids: every POST /mcp stands alone. */
  stateless: boolean;
  /** Sessions idle longer than this are closed, ms. */
  sessionTtlMs: number;
  maxSessions: number;
}

/**
 * MCP over HTTP: Streamable HTTP at /mcp (sessions when a client initializes
 * one, stateless otherwise: a request without a session id is served on its
 * own, which suits RL clients that open a new connection per call) and the
 * legacy SSE transport at /sse + /messages. Stateless requests all go to one
 * long-lived McpServer through our own JSON transport (mcp-stateless.ts).
 */
export class McpHttp {
  private readonly sessions: SessionRegistry;
  private readonly stateless: StatelessMcp;

  constructor(
    private readonly makeServer: () => McpServer,
    private readonly opts: McpHttpOptions,
    log: Logger,
    answerWithinMs: number,
  ) {
    this.sessions = new SessionRegistry({ ttlMs: opts.sessionTtlMs, max: opts.maxSessions }, log);
    this.stateless = new StatelessMcp(makeServer(), answerWithinMs);
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
      const s = this.sessions.use(sid, StreamableHTTPServerTransport);
      if (!s) {
        sendJson(
          res,
          404,
          jsonRpcError(-32001, `unknown or expired session ${sid.slice(0, 64)}: initialize a new one`),
        );
        return;
      }
      await s.transport.handleRequest(req, res, body);
      pruneAnswered(s.transport);
      return;
    }
    if (!this.opts.stateless && req.method === 'POST' && isInitialize(body) && !this.sessions.full) {
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

  /** GET /sse: opens a legacy SSE session. */
  handleSse(_req: IncomingMessage, res: ServerResponse): Promise<void> {
    return openSseSession(this.sessions, this.makeServer, res);
  }

  /** POST /messages?sessionId=…: a message of an SSE session. */
  handleSseMessage(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    return postSseMessage(this.sessions, req, res, body);
  }

  async closeAll(): Promise<void> {
    await this.sessions.closeAll();
    await this.stateless.close();
  }

  private async startSession(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const server = this.makeServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => this.sessions.add(id, { transport, server, lastUsed: Date.now() }),
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.forget(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    pruneAnswered(transport);
  }
}

/** The fields of SDK 1.32.2's web-standard transport that `pruneAnswered` reads. */
interface JsonModeMaps {
  _streamMapping?: Map<string, { resolveJson?: unknown }>;
  _requestToStreamMapping?: Map<unknown, string>;
}

/**
 * SDK 1.32.2's JSON-response mode resolves each request's entry in the
 * session transport's `_streamMapping` and never deletes it (the 2.x line
 * does, with `stream.cleanup()` after `resolveJson`): one long session kept
 * tens of KB a call until the heap ran out. An entry no pending request
 * points at any more is answered, and is deleted here. Private fields of a
 * pinned SDK, as `_onrequest` in mcp-stateless.ts; answering in SSE instead
 * avoided them but made the SDK's own client keep an abort listener a call.
 * test/e2e/mcp-long-session.test.ts fails if an upgrade changes them.
 */
function pruneAnswered(transport: StreamableHTTPServerTransport): void {
  const inner = (transport as unknown as { _webStandardTransport?: JsonModeMaps })._webStandardTransport;
  const streams = inner?._streamMapping;
  const pending = inner?._requestToStreamMapping;
  if (!streams || !pending) return;
  const live = new Set(pending.values());
  for (const [id, stream] of streams) if (stream.resolveJson !== undefined && !live.has(id)) streams.delete(id);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function isInitialize(body: unknown): boolean {
  const msgs = Array.isArray(body) ? body : [body];
  return msgs.some((m) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize');
}

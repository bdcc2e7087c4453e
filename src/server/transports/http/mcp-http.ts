import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import {
  classifyInboundRequest,
  createMcpHandler,
  type McpHttpHandler,
  type McpServer,
  type Transport,
} from '@modelcontextprotocol/server';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../../util/log.js';
import type { AnswerGate } from '../../answer-size.js';
import { in2025Codes, readableId, RPC, rpcError, screenMessage } from '../../mcp/wire-rules.js';
import { openSseSession, postSseMessage } from './sse.js';
import { sendJson, sendRpcRefusal } from './http-util.js';
import { SessionRegistry } from './sessions.js';
import { ServerPool } from '../../mcp/server-pool.js';
import { serveOnWebHandler } from './web-exchange.js';

export interface McpHttpOptions {
  /** Never issue session ids: every POST /mcp stands alone. */
  stateless: boolean;
  /** Sessions idle longer than this are closed, ms. */
  sessionTtlMs: number;
  maxSessions: number;
}

/**
 * MCP over HTTP, both protocol eras on the same endpoints:
 * - 2026-07-28 requests (the `_meta` envelope) are stateless by the spec, and
 *   are served by the SDK's `createMcpHandler`, an instance a request, the
 *   instances reused once answered (server-pool.ts);
 * - 2025 clients that `initialize` get a session (Streamable HTTP, with
 *   `Mcp-Session-Id`), unless `--stateless`;
 * - other 2025 POSTs without a session id (RL clients that open a connection
 *   per call) are served statelessly, an instance a request, answered as
 *   application/json (the SDK's own stateless fallback answers in SSE, which
 *   the raw-HTTP clients of RL frameworks do not read);
 * - the legacy HTTP+SSE transport at /sse + /messages.
 * The era is the SDK's decision (`classifyInboundRequest`, the rule its
 * handler routes by), taken per request and before any session header: a
 * 2026 request is stateless by the spec, so an `Mcp-Session-Id` it carries,
 * live or stale, is ignored. Every message is screened first (wire-rules.ts).
 */
export class McpHttp {
  private readonly sessions: SessionRegistry;
  private readonly handler: McpHttpHandler;
  /** Instances for 2026-07-28 exchanges, reused once answered (server-pool.ts). */
  private readonly pool: ServerPool;
  /** Stateless exchanges not yet answered: at close each gets an error answer, not a dropped socket. */
  private readonly inFlight = new Set<{ res: ServerResponse; body: unknown }>();
  private closed = false;
  /** A 2026 exchange the adapter could not hand to the SDK's handler (it answers 500). */
  private readonly adapterError = (err: Error): void => this.log.warn(`mcp: ${err.message}`);

  constructor(
    private readonly makeServer: () => McpServer,
    private readonly opts: McpHttpOptions,
    private readonly log: Logger,
    private readonly answers: AnswerGate,
    /** What serves (slot.generation): instances are reused only while it stays the same. */
    ready: () => number | undefined,
  ) {
    this.sessions = new SessionRegistry({ ttlMs: opts.sessionTtlMs, max: opts.maxSessions }, log);
    this.pool = new ServerPool(makeServer, ready);
    this.handler = createMcpHandler(() => this.pool.take(), {
      legacy: 'reject',
      onerror: (err) => log.debug(`mcp: ${err.message}`),
    });
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  async handleMcp(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const id = readableId(body);
    if (this.closed) {
      sendRpcRefusal(res, 'SHUTTING_DOWN', 'the server is shutting down: retry shortly', { id });
      return;
    }
    const screened = screenMessage(body, { checkVersion: false });
    if (screened) {
      sendJson(res, screened.error.code === RPC.INVALID_REQUEST ? 400 : 200, screened);
      return;
    }
    if (!isLegacy(req, body)) {
      await this.tracked(res, body, () => serveOnWebHandler(this.handler, req, res, body, this.adapterError));
      return;
    }
    const sid = header(req, 'mcp-session-id');
    if (sid !== undefined) {
      const s = this.sessions.use(sid, NodeStreamableHTTPServerTransport);
      if (!s) {
        // the 2025 transport's own answer, which its clients read as "initialize again"
        const message = `unknown or expired session ${sid.slice(0, 64)}: initialize a new one`;
        sendJson(res, 404, rpcError(id, RPC.UNKNOWN_SESSION_2025, message));
        return;
      }
      await s.transport.handleRequest(req, res, body);
      return;
    }
    if (req.method !== 'POST') {
      sendRpcRefusal(
        res,
        'METHOD_NOT_ALLOWED',
        'stateless MCP supports POST only; initialize a session for GET streams',
        {
          id,
          headers: { allow: 'POST' },
        },
      );
      return;
    }
    if (!this.opts.stateless && isInitialize(body) && !this.sessions.full) {
      await this.startSession(req, res, body);
      return;
    }
    await this.tracked(res, body, () => this.legacyStateless(req, res, body));
  }

  private async tracked(res: ServerResponse, body: unknown, serve: () => Promise<void>): Promise<void> {
    const entry = { res, body };
    this.inFlight.add(entry);
    // 'close' follows every answer, and a dropped socket too
    res.once('close', () => this.inFlight.delete(entry));
    await serve();
  }

  /** A 2025-era request without a session: its own server instance, answered as JSON. */
  private async legacyStateless(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const server = this.makeServer();
    const transport = answerIn2025Codes(
      new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true }),
    );
    res.once('close', () => {
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /** GET /sse: opens a legacy SSE session. */
  handleSse(_req: IncomingMessage, res: ServerResponse): Promise<void> {
    return openSseSession(this.sessions, this.makeServer, res);
  }

  /** POST /messages?sessionId=…: a message of an SSE session, its answer admitted by size until it is sent. */
  handleSseMessage(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    return postSseMessage(this.sessions, req, res, body, this.answers);
  }

  /** Closes every session; stateless requests in flight are answered with an error, later ones 503. */
  async closeAll(): Promise<void> {
    this.closed = true;
    for (const { res, body } of this.inFlight) {
      if (res.headersSent) continue;
      const message = 'the server is shutting down: retry shortly';
      const answers = requestIds(body).map((id) => rpcError(id, RPC.UNAVAILABLE, message, { reason: 'SHUTTING_DOWN' }));
      sendJson(res, 200, Array.isArray(body) ? answers : (answers[0] ?? rpcError(null, RPC.UNAVAILABLE, message)));
    }
    this.inFlight.clear();
    await this.sessions.closeAll();
    await this.handler.close();
    this.pool.clear();
  }

  private async startSession(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const server = this.makeServer();
    const transport: NodeStreamableHTTPServerTransport = answerIn2025Codes(
      new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id) => this.sessions.add(id, { transport, server, lastUsed: Date.now() }),
      }),
    );
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.forget(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }
}

/**
 * Whether a request is of the 2025 era, by the SDK's own classification (what
 * `isLegacyRequest` decides, without converting the request to a web-standard
 * one first). A body that is not JSON-RPC, and a GET or DELETE, are 2025's.
 */
function isLegacy(req: IncomingMessage, body: unknown): boolean {
  if (body === undefined || req.method !== 'POST') return true;
  const outcome = classifyInboundRequest({
    httpMethod: req.method,
    body,
    protocolVersionHeader: header(req, 'mcp-protocol-version'),
    mcpMethodHeader: header(req, 'mcp-method'),
    mcpNameHeader: header(req, 'mcp-name'),
  });
  return outcome.kind === 'legacy';
}

/** A 2025-era transport whose answers take 2025-11-25's error codes (wire-rules.ts `in2025Codes`). */
function answerIn2025Codes<T extends Transport>(transport: T): T {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => send(in2025Codes(message), options);
  return transport;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The ids of the requests in a POSTed body (notifications have none). */
function requestIds(body: unknown): Array<string | number> {
  const msgs = Array.isArray(body) ? body : [body];
  return msgs.flatMap((m) => {
    const id = typeof m === 'object' && m !== null ? (m as { id?: unknown; method?: unknown }).id : undefined;
    return typeof id === 'string' || typeof id === 'number' ? [id] : [];
  });
}

function isInitialize(body: unknown): boolean {
  const msgs = Array.isArray(body) ? body : [body];
  return msgs.some((m) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize');
}

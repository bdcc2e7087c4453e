import {
  isJsonContentType,
  parseJSONRPCMessage,
  type JSONRPCMessage,
  type McpServer,
  type MessageExtraInfo,
  type Transport,
} from '@modelcontextprotocol/server';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './http-util.js';
import type { SessionRegistry } from './sessions.js';

/**
 * The legacy HTTP+SSE transport (MCP 2024-11-05; FastMCP's and the
 * Inspector's `sse` mode): GET /sse opens a session's event stream and names
 * the endpoint its messages go to, POST /messages?sessionId=…, each answered
 * 202 with its answer sent down the stream. The v2 SDK dropped this
 * deprecated transport, and clients still use it, so it is ours: the
 * protocol is a dozen lines of framing.
 */
export class SseTransport implements Transport {
  readonly sessionId = randomUUID();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  private closed = false;

  constructor(
    private readonly endpoint: string,
    private readonly res: ServerResponse,
  ) {}

  async start(): Promise<void> {
    this.res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
    });
    this.res.write(`event: endpoint\ndata: ${this.endpoint}?sessionId=${this.sessionId}\n\n`);
    this.res.on('close', () => void this.close());
  }

  /** One POSTed message: checked, handed to the server, acknowledged with 202. */
  handlePost(req: IncomingMessage, res: ServerResponse, body: unknown): void {
    if (!isJsonContentType(req.headers['content-type'])) {
      sendJson(res, 415, { error: { code: 'BAD_REQUEST', message: 'send the message as application/json' } });
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(body);
    } catch {
      sendJson(res, 400, { error: { code: 'BAD_REQUEST', message: 'the body is not a JSON-RPC 2.0 message' } });
      return;
    }
    res.writeHead(202, { 'content-type': 'text/plain' }).end('Accepted');
    this.onmessage?.(message);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error('the SSE stream is closed');
    this.res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.res.end();
    this.onclose?.();
  }
}

/**
 * GET /sse: opens a legacy SSE session. Sessions share the registry (cap and
 * TTL) with Streamable HTTP.
 */
export async function openSseSession(
  registry: SessionRegistry,
  makeServer: () => McpServer,
  res: ServerResponse,
): Promise<void> {
  if (registry.full) {
    sendJson(
      res,
      503,
      { error: { code: 'OVERLOADED', message: 'too many open sessions: retry shortly' } },
      { 'retry-after': '5' },
    );
    return;
  }
  const transport = new SseTransport('/messages', res);
  const server = makeServer();
  registry.add(transport.sessionId, { transport, server, lastUsed: Date.now() });
  transport.onclose = () => void registry.close(transport.sessionId);
  await server.connect(transport);
}

/** POST /messages?sessionId=…: a message of an SSE session. */
export async function postSseMessage(
  registry: SessionRegistry,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  const sid = new URL(req.url ?? '/', 'http://x').searchParams.get('sessionId') ?? '';
  const s = registry.use(sid, SseTransport);
  if (!s) {
    sendJson(res, 404, {
      error: { code: 'NOT_FOUND', message: `unknown SSE session "${sid.slice(0, 64)}": open GET /sse first` },
    });
    return;
  }
  s.transport.handlePost(req, res, body);
}

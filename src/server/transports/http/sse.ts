import {
  isJsonContentType,
  parseJSONRPCMessage,
  PROTOCOL_VERSION_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  UnsupportedProtocolVersionError,
  type JSONRPCMessage,
  type McpServer,
  type MessageExtraInfo,
  type Transport,
} from '@modelcontextprotocol/server';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Lease } from '../../admission.js';
import { answerLeases, answerRefusal, type AnswerGate } from '../../answer-size.js';
import {
  hasEnvelopeClaim,
  in2025Codes,
  readableId,
  RPC,
  rpcError,
  screenMessage,
  type ErrorAnswer,
  type RequestId,
} from '../../mcp/wire-rules.js';
import { sendJson, sendRpcRefusal } from './http-util.js';
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
  /** Answer memory each request holds until its answer is written to the stream. */
  private readonly leases = new Map<RequestId, Lease>();

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

  /**
   * One POSTed message: checked and screened, admitted by its answer's size,
   * handed to the server and acknowledged with 202 (its answer goes down the
   * stream). Refusals are JSON-RPC errors in the POST's own answer.
   */
  handlePost(req: IncomingMessage, res: ServerResponse, body: unknown, answers: AnswerGate): void {
    const id = readableId(body);
    if (!isJsonContentType(req.headers['content-type'])) {
      sendRpcRefusal(res, 'UNSUPPORTED_MEDIA_TYPE', 'send the message as application/json', { id });
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(body);
    } catch {
      sendRpcRefusal(res, 'BAD_INPUT', 'the body is not a JSON-RPC 2.0 message', { id, rpcCode: RPC.INVALID_REQUEST });
      return;
    }
    const screened = legacyOnly(message) ?? screenMessage(message, { checkVersion: true });
    if (screened) {
      if (id === null) {
        sendJson(res, 400, screened);
        return;
      }
      // a legacy client reads every answer from the stream: an error in the POST's own body
      // surfaces as a transport failure, which a client negotiating a version cannot fall back from
      res.writeHead(202, { 'content-type': 'text/plain' }).end('Accepted');
      void this.send(screened as unknown as JSONRPCMessage).catch(() => undefined);
      return;
    }
    const bytes = answers.sizer.mcp(message);
    let lease: Lease | undefined;
    if (bytes > 0 && id !== null) {
      lease = answers.budget.tryReserve(bytes);
      if (!lease) {
        sendRpcRefusal(res, 'OVERLOADED', answerRefusal(answers.budget, bytes), { id });
        return;
      }
      this.leases.get(id)?.release(); // a client reusing an id in flight: the earlier lease goes
      this.leases.set(id, lease);
    }
    res.writeHead(202, { 'content-type': 'text/plain' }).end('Accepted');
    if (lease) answerLeases.run(lease, () => this.onmessage?.(message));
    else this.onmessage?.(message);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error('the SSE stream is closed');
    const id = readableId(message);
    const lease = id !== null && !('method' in message) ? this.leases.get(id) : undefined;
    if (lease) this.leases.delete(id as RequestId);
    // a legacy transport: its answers take 2025-11-25's codes; the lease ends once the socket took them
    this.res.write(`event: message\ndata: ${JSON.stringify(in2025Codes(message))}\n\n`, () => lease?.release());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const lease of this.leases.values()) lease.release();
    this.leases.clear();
    this.res.end();
    this.onclose?.();
  }
}

/**
 * -32022 for a request in the 2026-07-28 envelope: this transport speaks the 2025-era protocol
 * only, and answering such a request in 2025's shape (no `resultType`, `ttlMs`, `cacheScope`) made
 * 2026 clients fail on validation instead of falling back; `data.supported` names what it speaks.
 */
function legacyOnly(message: JSONRPCMessage): ErrorAnswer | undefined {
  const id = readableId(message);
  if (id === null || !hasEnvelopeClaim(message)) return undefined;
  const meta = (message as { params: { _meta: Record<string, unknown> } }).params._meta;
  const requested = String(meta[PROTOCOL_VERSION_META_KEY]).slice(0, 64);
  const e = new UnsupportedProtocolVersionError({ supported: [...SUPPORTED_PROTOCOL_VERSIONS], requested });
  return rpcError(id, e.code, `${e.message} (legacy SSE speaks 2025-era MCP; 2026-07-28 is served at /mcp)`, e.data);
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
    sendRpcRefusal(res, 'OVERLOADED', 'too many open sessions: retry shortly', { headers: { 'retry-after': '5' } });
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
  answers: AnswerGate,
): Promise<void> {
  const sid = new URL(req.url ?? '/', 'http://x').searchParams.get('sessionId') ?? '';
  const s = registry.use(sid, SseTransport);
  if (!s) {
    const message = `unknown SSE session "${sid.slice(0, 64)}": open GET /sse first`;
    sendRpcRefusal(res, 'NOT_FOUND', message, { id: readableId(body) });
    return;
  }
  s.transport.handlePost(req, res, body, answers);
}

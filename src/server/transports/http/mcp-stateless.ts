import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './http-util.js';

/** The most JSON-RPC messages one POST may carry (the SDK's transport uses the same cap). */
export const MAX_STATELESS_BATCH = 100;

interface Pending {
  /** The id the client sent, restored on the way out. */
  clientId: RequestId;
  exchange: Exchange;
  slot: number;
}

/** One HTTP request's requests, waiting for their answers. */
interface Exchange {
  answers: JSONRPCMessage[];
  left: number;
  /** The process-unique ids its requests were renamed to. */
  ids: number[];
  done: (answers: JSONRPCMessage[]) => void;
}

/**
 * Stateless MCP over Streamable HTTP (a POST without `Mcp-Session-Id`),
 * answered as `application/json`. One McpServer stays connected to one
 * transport of ours for the life of the process; every request's JSON-RPC ids
 * are renamed to process-unique ones on the way in and restored on the way out,
 * so clients that all number their calls from 1 never meet. This skips what the
 * SDK's per-request transport costs (a Fetch Request/Response round trip per
 * call, a connect and a close), which was most of MCP's overhead over REST;
 * the SDK's Server still validates and dispatches every message.
 */
export class StatelessMcp {
  private readonly transport = new MuxTransport();
  private readonly ready: Promise<void>;
  private closed = false;

  /**
   * `answerWithinMs` bounds how long any request may wait for the server's
   * answer (the tools' own deadline plus a margin): past it the request is
   * answered with an error and forgotten, so no message shape can leave an
   * entry behind.
   */
  constructor(
    server: McpServer,
    private readonly answerWithinMs: number,
    /** false: every message takes the SDK's public path (`onmessage`), for measuring what the direct one saves. */
    directDispatch = true,
  ) {
    this.ready = server.connect(this.transport);
    if (directDispatch) this.transport.dispatchRequest = requestDispatcher(server);
  }

  /** Requests delivered and not yet answered (a leak shows here). */
  get pendingCount(): number {
    return this.transport.pendingCount;
  }

  /** Whether requests skip the SDK's message-type guards (see `requestDispatcher`). */
  get directDispatch(): boolean {
    return this.transport.dispatchRequest !== undefined;
  }

  async handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    await this.ready;
    if (this.closed) {
      // the server's transport is gone: nothing would ever answer
      reject(res, 503, -32000, 'the server is shutting down: retry shortly', { 'retry-after': '1' });
      return;
    }
    const accept = req.headers.accept ?? '';
    // The spec has clients accept both; Accept is a list, so a substring test is the intended check.
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      reject(res, 406, -32000, 'Not Acceptable: send "Accept: application/json, text/event-stream"');
      return;
    }
    const raw = Array.isArray(body) ? body : [body];
    if (raw.length === 0 || raw.length > MAX_STATELESS_BATCH) {
      reject(res, 400, -32600, `Invalid Request: a batch holds 1 to ${MAX_STATELESS_BATCH} JSON-RPC messages`);
      return;
    }
    if (!raw.every(isJsonRpcMessage)) {
      reject(res, 400, -32700, 'Parse error: Invalid JSON-RPC message (jsonrpc "2.0" with a method or an id)');
      return;
    }
    const messages = raw as JSONRPCMessage[];
    const initializing = messages.some((m) => 'method' in m && m.method === 'initialize');
    if (initializing && messages.length > 1) {
      reject(res, 400, -32600, 'Invalid Request: send initialize on its own, not in a batch');
      return;
    }
    const version = req.headers['mcp-protocol-version'];
    if (!initializing && typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      reject(
        res,
        400,
        -32000,
        `Bad Request: unsupported MCP protocol version ${version.slice(0, 32)} ` +
          `(supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      );
      return;
    }
    const extra = { requestInfo: { headers: req.headers } };
    const requests = messages.filter(isRequest);
    if (requests.length === 0) {
      // notifications and responses only; a cancellation cannot name a request of another POST
      for (const m of messages) this.transport.deliver(m, extra);
      res.writeHead(202).end();
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const answers = await new Promise<JSONRPCMessage[]>((done) => {
      const exchange: Exchange = {
        answers: new Array<JSONRPCMessage>(requests.length),
        left: requests.length,
        ids: [],
        done,
      };
      timer = setTimeout(() => this.transport.expire(exchange), this.answerWithinMs);
      let slot = 0;
      for (const m of messages) {
        if (isRequest(m)) this.transport.deliver(this.transport.rename(m, exchange, slot++), extra);
        else this.transport.deliver(m, extra);
      }
    });
    clearTimeout(timer);
    if (res.destroyed) return; // the client went away; nothing to write to
    sendJson(res, 200, Array.isArray(body) ? answers : answers[0]);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.transport.close();
  }
}

class MuxTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  /** Hands a request straight to the Protocol's request path, where the SDK has one. */
  dispatchRequest: Transport['onmessage'];
  private next = 0;
  private readonly pending = new Map<number, Pending>();

  async start(): Promise<void> {}

  rename(m: JSONRPCRequest, exchange: Exchange, slot: number): JSONRPCMessage {
    const id = ++this.next;
    this.pending.set(id, { clientId: m.id, exchange, slot });
    exchange.ids.push(id);
    return { ...m, id };
  }

  /** Answers whatever the server has not answered of an exchange, and forgets it. */
  expire(exchange: Exchange): void {
    for (const id of exchange.ids) {
      const p = this.pending.get(id);
      if (!p) continue;
      this.pending.delete(id);
      settle(p, {
        jsonrpc: '2.0',
        id: p.clientId,
        error: { code: -32001, message: 'the request was not answered in time: retry' },
      });
    }
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  deliver(m: JSONRPCMessage, extra: { requestInfo: { headers: IncomingMessage['headers'] } }): void {
    if (!('method' in m)) return; // a response: this server never asks clients anything
    // a cancellation names an id of another POST, which this server renamed: drop it. Only a
    // notification, though: a request (one with an id), whatever its method, must be answered,
    // or its entry would wait for ever (the SDK answers an unknown method with an error)
    if (!('id' in m) && m.method === 'notifications/cancelled') return;
    if ('id' in m && this.dispatchRequest) this.dispatchRequest(m, extra);
    else this.onmessage?.(m, extra);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Server-to-client notifications and requests have no stream to go to in JSON mode.
    if ('method' in message) return;
    const id = message.id;
    const p = typeof id === 'number' ? this.pending.get(id) : undefined;
    if (!p) return;
    this.pending.delete(id as number);
    settle(p, { ...message, id: p.clientId });
  }

  async close(): Promise<void> {
    for (const p of this.pending.values()) {
      settle(p, {
        jsonrpc: '2.0',
        id: p.clientId,
        error: { code: -32000, message: 'the server is shutting down: retry on another instance' },
      });
    }
    this.pending.clear();
    this.onclose?.();
  }
}

/** Puts a request's answer in its slot; the exchange is done when every slot is filled. */
function settle(p: Pending, answer: JSONRPCMessage): void {
  p.exchange.answers[p.slot] = answer;
  if (--p.exchange.left === 0) p.exchange.done(p.exchange.answers);
}

/*
 * Structural checks instead of the SDK's zod guards: a guard that fails (every
 * notification tested as a request, every request as an initialize) builds a
 * full error report, ≈ 75 µs a message, most of what this path cost. The
 * SDK's Server still validates each request's params against its schema.
 */
function isJsonRpcMessage(m: unknown): boolean {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return false;
  const o = m as Record<string, unknown>;
  if (o['jsonrpc'] !== '2.0') return false;
  const id = o['id'];
  const idOk = typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
  const params = o['params'];
  // JSON-RPC allows positional params; MCP does not, and the SDK's schemas would not answer them
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) return false;
  if (typeof o['method'] === 'string') return id === undefined || idOk;
  const body = o['result'] ?? o['error'];
  return idOk && typeof body === 'object' && body !== null;
}

/**
 * The SDK's Protocol sorts every incoming message by trying zod guards in
 * turn: result, then error, then request. For a request the first two fail,
 * and a failing zod parse builds a full error report: ≈ 0.15 ms a call, the
 * largest single cost left on this path (CPU profile of `bench/overhead.ts`).
 * Our structural check has already told requests apart, so they go to the
 * Protocol's own request handler (`_onrequest`, which the guard would call
 * next with the same arguments). It is not public API: where a future SDK
 * lacks it, messages take the guarded path (`onmessage`) as before, and
 * `test/unit/server/mcp-stateless.test.ts` fails on the pinned SDK if this
 * path is ever not taken.
 */
function requestDispatcher(server: McpServer): Transport['onmessage'] {
  const protocol = server.server as unknown as { _onrequest?: (m: JSONRPCMessage, extra?: unknown) => void };
  const onrequest = protocol._onrequest;
  if (typeof onrequest !== 'function') return undefined;
  return (m, extra) => onrequest.call(protocol, m, extra);
}

function isRequest(m: JSONRPCMessage): m is JSONRPCRequest {
  return 'method' in m && 'id' in m;
}

/** A JSON-RPC error that answers no particular request (id null). */
export function jsonRpcError(code: number, message: string): unknown {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}

function reject(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, jsonRpcError(code, message), headers);
}

import {
  classifyInboundRequest,
  PROTOCOL_VERSION_META_KEY,
  specTypeSchemas,
  UnsupportedProtocolVersionError,
  type JSONRPCMessage,
} from '@modelcontextprotocol/server';

/**
 * The rules of the MCP wire that hold for every message on its own, whatever
 * the transport and whatever came before on the same connection (2026-07-28:
 * servers MUST NOT rely on earlier requests for context such as the protocol
 * version). stdio and HTTP both screen each message here before the SDK sees
 * it, and rewrite a few 2025-era answers on the way out.
 */

/** The 2026 revisions served; the SDK's SUPPORTED_PROTOCOL_VERSIONS lists the 2025-era ones. */
export const MODERN_REVISIONS: readonly string[] = ['2026-07-28'];

/**
 * JSON-RPC error codes. 2026-07-28 says new implementations SHOULD NOT use
 * -32000..-32019, so the server's own conditions take codes outside the
 * pre-defined range (-32768..-32000); `UNKNOWN_SESSION` is the 2025 transport's
 * own code, answered to 2025 requests only.
 */
export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** 2025-11-25's resource-not-found (2026-07-28 answers -32602). */
  RESOURCE_NOT_FOUND_2025: -32002,
  UNKNOWN_SESSION_2025: -32001,
  /** Busy, loading or stopping: retry (HTTP 503 with Retry-After). */
  UNAVAILABLE: -31001,
  /** The request ran past its deadline (HTTP 504). */
  DEADLINE: -31002,
} as const;

/** How deep a message may nest; MCP's own messages stay under ten levels, a tool's arguments a few more. */
export const MAX_MESSAGE_DEPTH = 64;

/** Longest resource URI read: a passage URI is a corpus name and a chunk id. */
export const MAX_URI_CHARS = 2048;

export type RequestId = string | number;

export interface ErrorAnswer {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: { code: number; message: string; data?: unknown };
}

export function rpcError(id: RequestId | null, code: number, message: string, data?: unknown): ErrorAnswer {
  return { jsonrpc: '2.0', id, error: { code, message, ...(data !== undefined ? { data } : {}) } };
}

/**
 * The spec type of each request method the server answers in both eras. Not
 * `initialize` nor `logging/setLevel`: 2026-07-28 answers those as methods it
 * does not define (404), whatever their params, and the SDK does so.
 */
const REQUEST_TYPES: ReadonlyMap<string, keyof typeof specTypeSchemas> = new Map([
  ['ping', 'PingRequest'],
  ['server/discover', 'DiscoverRequest'],
  ['tools/list', 'ListToolsRequest'],
  ['tools/call', 'CallToolRequest'],
  ['resources/list', 'ListResourcesRequest'],
  ['resources/templates/list', 'ListResourceTemplatesRequest'],
  ['resources/read', 'ReadResourceRequest'],
]);

/** A message's id when it has a usable one (JSON-RPC 2.0: null where it cannot be read). */
export function readableId(message: unknown): RequestId | null {
  const id = isObject(message) ? message['id'] : undefined;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/** Whether a request carries the 2026-07-28 per-request envelope's protocol version. */
export function hasEnvelopeClaim(message: unknown): boolean {
  const params = isObject(message) ? message['params'] : undefined;
  const meta = isObject(params) ? params['_meta'] : undefined;
  return isObject(meta) && meta[PROTOCOL_VERSION_META_KEY] !== undefined;
}

/**
 * The error a single JSON-RPC message gets before any server sees it, or
 * undefined to serve it: nested past MAX_MESSAGE_DEPTH (a body 5,000 levels
 * deep overflowed the SDK's stack), an envelope naming a revision not served
 * (`checkVersion`: stdio, where the SDK checks only a connection's opening
 * message), params that break the method's spec schema (the SDK answered
 * -32603 with a multi-line validation dump), and a resource URI too long to
 * be a passage's (the SDK echoed 100 KB URIs back).
 */
export function screenMessage(message: unknown, opts: { checkVersion: boolean }): ErrorAnswer | undefined {
  const id = readableId(message);
  const shape = shapeFault(message, MAX_MESSAGE_DEPTH);
  if (shape === 'deep') {
    return rpcError(
      id,
      RPC.INVALID_REQUEST,
      `Invalid Request: the message nests deeper than ${MAX_MESSAGE_DEPTH} levels`,
    );
  }
  if (!isObject(message) || typeof message['method'] !== 'string' || id === null) return undefined;
  if (shape === 'proto-key') {
    // JSON.parse makes `__proto__` an own key; copied by assignment (as zod does) it would replace
    // the copy's prototype instead of being named as an unknown argument
    return rpcError(id, RPC.INVALID_PARAMS, 'Invalid params: a key named "__proto__" is not accepted');
  }
  const tool = message['method'] === 'tools/call' && isObject(message['params']) ? message['params']['name'] : '';
  if (typeof tool === 'string' && INHERITED_NAMES.has(tool)) {
    // the SDK looks a tool up in a plain object, where `toString` is found (and "disabled")
    return rpcError(id, RPC.INVALID_PARAMS, `Tool ${tool} not found`);
  }
  if (opts.checkVersion && hasEnvelopeClaim(message)) {
    const requested = String(
      (message['params'] as { _meta: Record<string, unknown> })._meta[PROTOCOL_VERSION_META_KEY],
    );
    if (!MODERN_REVISIONS.includes(requested)) {
      const e = new UnsupportedProtocolVersionError({ supported: [...MODERN_REVISIONS], requested });
      return rpcError(id, e.code, e.message, e.data);
    }
  }
  // a Map, not an object: a method named `toString` or `__proto__` must not reach Object.prototype
  const type = REQUEST_TYPES.get(message['method']);
  if (!type) return undefined;
  const checked = specTypeSchemas[type]['~standard'].validate(message);
  const issues = checked instanceof Promise ? undefined : checked.issues;
  if (issues && issues.length > 0) {
    const first = issues[0] as { path?: ReadonlyArray<PropertyKey | { key: PropertyKey }>; message: string };
    const where = (first.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.');
    return rpcError(
      id,
      RPC.INVALID_PARAMS,
      `Invalid params for ${message['method']}: ${where || 'params'}: ${first.message}`,
    );
  }
  const uri = message['method'] === 'resources/read' ? (message['params'] as { uri: string }).uri : '';
  if (uri.length > MAX_URI_CHARS) {
    return rpcError(
      id,
      RPC.INVALID_PARAMS,
      `Invalid params: the uri is ${uri.length} characters; the limit is ${MAX_URI_CHARS}`,
    );
  }
  return undefined;
}

/**
 * Why a stdio line holding a JSON-RPC batch is refused, or undefined to take
 * it apart: the SDK's own rule for HTTP (a batch may not be empty nor hold a
 * 2026-07-28 message; 2025-03-26 clients may batch), so both transports
 * agree. A batch with an invalid element is still taken apart on stdio, so
 * each of its requests is answered with its own id.
 */
export function batchRefusal(batch: unknown[]): ErrorAnswer | undefined {
  const outcome = classifyInboundRequest({ httpMethod: 'POST', body: batch });
  if (outcome.kind !== 'reject' || outcome.cell === 'batch-with-invalid-element') return undefined;
  return rpcError(null, outcome.code, outcome.message);
}

/**
 * A 2025-era answer in 2025-11-25's codes: a passage not found is -32002
 * there (the SDK's codecs answer 2026's -32602 in both eras). Our resource
 * handler is the only thrower of an invalid-params error carrying `data.uri`.
 */
export function in2025Codes<T extends JSONRPCMessage>(message: T): T {
  const error = (message as { error?: { code: number; data?: unknown } }).error;
  if (!error || error.code !== RPC.INVALID_PARAMS || !isObject(error.data) || typeof error.data['uri'] !== 'string')
    return message;
  return { ...message, error: { ...error, code: RPC.RESOURCE_NOT_FOUND_2025 } };
}

/** Names every plain object answers without owning them: `toString`, `constructor`, `__proto__`, … */
export const INHERITED_NAMES: ReadonlySet<string> = new Set([...Object.getOwnPropertyNames(Object.prototype)]);

/**
 * 'deep' when a JSON value nests deeper than `max` levels, 'proto-key' when an object in it owns a
 * `__proto__` key, walked without recursion.
 */
function shapeFault(value: unknown, max: number): 'deep' | 'proto-key' | undefined {
  const stack: Array<[unknown, number]> = [[value, 1]];
  let protoKey = false;
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return 'deep';
    if (!Array.isArray(v) && Object.hasOwn(v, '__proto__')) protoKey = true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return protoKey ? 'proto-key' : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

import { validateHostHeader } from '@modelcontextprotocol/server';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describeError, RetrieverError, type ErrorCode } from '../../../errors.js';
import { RPC, rpcError, type RequestId } from '../../mcp/wire-rules.js';

/** Codes only the HTTP layer answers with, beside the product's own ErrorCode. */
export type HttpCode =
  | ErrorCode
  | 'NOT_FOUND'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_READY'
  | 'SHUTTING_DOWN'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'METHOD_NOT_ALLOWED';

/** HTTP status for each error code; bodies never carry stack traces. */
export function statusFor(code: string): number {
  switch (code as HttpCode) {
    case 'BAD_INPUT':
    case 'UNKNOWN_CORPUS':
    case 'MODE_UNAVAILABLE':
      return 400;
    case 'UNAUTHORIZED':
      return 401;
    case 'FORBIDDEN':
      return 403;
    case 'NOT_FOUND':
      return 404;
    case 'METHOD_NOT_ALLOWED':
      return 405;
    case 'PAYLOAD_TOO_LARGE':
      return 413;
    case 'UNSUPPORTED_MEDIA_TYPE':
      return 415;
    case 'OVERLOADED':
    case 'NOT_READY':
    case 'SHUTTING_DOWN':
      return 503;
    case 'DEADLINE':
      return 504;
    case 'ENGINE':
      return 502;
    default:
      return 500;
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendError(
  res: ServerResponse,
  code: string,
  message: string,
  extraHeaders: Record<string, string> = {},
): void {
  sendJson(res, statusFor(code), { error: { code, message } }, refusalHeaders(code, extraHeaders));
}

/** A 503 tells the client when to retry: 5 s while loading, 1 s when busy or stopping. */
function refusalHeaders(code: string, extra: Record<string, string> = {}): Record<string, string> {
  return statusFor(code) === 503 ? { 'retry-after': code === 'NOT_READY' ? '5' : '1', ...extra } : extra;
}

/** Maps any thrown value to an error response; unexpected errors are logged, not exposed. */
export function sendThrown(res: ServerResponse, err: unknown, log: (msg: string) => void): string {
  if (err instanceof RetrieverError) {
    sendError(res, err.code, err.message);
    return err.code;
  }
  log(`internal error: ${describeError(err)}`);
  sendError(res, 'INTERNAL', 'internal error (see the server log)');
  return 'INTERNAL';
}

export class HttpError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** The JSON-RPC code it takes on an MCP route, where the code alone does not say (a parse error). */
    readonly rpcCode?: number,
  ) {
    super(message);
  }
}

/** The JSON-RPC code of a refusal on an MCP route, by our code (wire-rules.ts says why none is in -32000..-32019). */
export function rpcCodeFor(code: string): number {
  switch (statusFor(code)) {
    case 503:
      return RPC.UNAVAILABLE;
    case 504:
      return RPC.DEADLINE;
    case 500:
    case 502:
      return RPC.INTERNAL_ERROR;
    default:
      return RPC.INVALID_REQUEST;
  }
}

/**
 * A refusal on an MCP route, in JSON-RPC's shape whatever went wrong: an
 * integer code, the request's id where it could be read (else null), our own
 * code as `data.reason`, and the HTTP status and Retry-After a REST answer
 * would have.
 */
export function sendRpcRefusal(
  res: ServerResponse,
  code: string,
  message: string,
  opts: { id?: RequestId | null; rpcCode?: number; headers?: Record<string, string> } = {},
): void {
  const answer = rpcError(opts.id ?? null, opts.rpcCode ?? rpcCodeFor(code), message, { reason: code });
  sendJson(res, statusFor(code), answer, refusalHeaders(code, opts.headers));
}

/**
 * Reads a request body up to `limit` bytes. Past the limit it stops reading
 * (the caller answers 413 and closes the connection) instead of taking in
 * the rest of a 200 MB upload only to discard it.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.reject(
      new HttpError('PAYLOAD_TOO_LARGE', `request body is ${declared} bytes; the limit is ${limit}`),
    );
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        reject(new HttpError('PAYLOAD_TOO_LARGE', `request body exceeds the limit of ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** Parses a JSON body, insisting on a JSON content type and valid UTF-8 JSON. */
export function parseJsonBody(req: IncomingMessage, body: Buffer): unknown {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new HttpError('UNSUPPORTED_MEDIA_TYPE', `content-type must be application/json, got "${type || 'none'}"`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new HttpError('BAD_INPUT', 'request body is not valid UTF-8', RPC.PARSE_ERROR);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HttpError('BAD_INPUT', `malformed JSON: ${(err as Error).message}`, RPC.PARSE_ERROR);
  }
}

/** Constant-time comparison of a presented bearer token with the configured one. */
export function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m) return false;
  const a = createHash('sha256')
    .update(m[1] as string)
    .digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}

/** The names a server bound to loopback answers to, before any --allowed-hosts (IPv6 in brackets, as in Host). */
export const LOOPBACK_HOST_NAMES = ['localhost', '127.0.0.1', '[::1]'] as const;
const LOCAL_HOSTS = new Set<string>([...LOOPBACK_HOST_NAMES, '::1']);

/** Whether a host name (a bind address, an Origin's or a Host header's name) is this machine's loopback. */
export function isLoopbackName(host: string): boolean {
  return LOCAL_HOSTS.has(host);
}

/**
 * DNS-rebinding protection for every route: the Host header's name (its port
 * dropped) must be one of `allowed` (lower-case names; IPv6 in brackets). A
 * page at evil.example that rebinds its name to 127.0.0.1 still sends
 * `Host: evil.example`, so it is refused. The header is parsed by the SDK's
 * `validateHostHeader`; the rule applies to every route (REST too), so it is
 * applied here, with our JSON errors, not by the SDK's MCP-only middleware.
 */
export function hostAllowed(host: string | undefined, allowed: readonly string[]): boolean {
  // the SDK's parser; a fully qualified name's final dot (`localhost.`) is the same host
  return validateHostHeader(host?.trim().replace(/\.(?=(?::\d{1,5})?$)/, ''), [...allowed]).ok;
}

/**
 * DNS-rebinding protection for MCP endpoints (required by the MCP spec):
 * requests without an Origin (non-browser clients) pass; browser origins must
 * be local or explicitly allowed.
 */
export function originAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined) return true;
  if (allowed.includes(origin) || allowed.includes('*')) return true;
  try {
    return isLoopbackName(new URL(origin).hostname);
  } catch {
    return false;
  }
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Retriever } from '../search/retriever.js';
import type { Logger } from '../util/log.js';
import type { Admission } from './admission.js';
import {
  HttpError,
  httpErrorStatus,
  originAllowed,
  parseJsonBody,
  readBody,
  sendError,
  sendJson,
  sendThrown,
  tokenMatches,
} from './http-util.js';
import type { McpHttp } from './mcp-http.js';
import type { ServerMetrics } from './metrics.js';
import { handleFlashBatchSearch, handleFlashSearch, handleRetrieve, type RestContext } from './rest.js';

export interface HttpOptions {
  authToken?: string;
  /** Browser origins allowed on the MCP endpoints besides localhost. */
  allowedOrigins: string[];
  /** Origins that get CORS headers (browser clients); empty = no CORS. */
  corsOrigins: string[];
  maxBodyBytes: number;
}

/** What the HTTP layer needs; `retriever` is undefined until indexes are loaded and warm. */
export interface HttpApp {
  retriever(): Retriever | undefined;
  mcp(): McpHttp | undefined;
  rest(): RestContext | undefined;
  admission: Admission;
  metrics: ServerMetrics;
  log: Logger;
}

const MCP_ROUTES = new Set(['/mcp', '/sse', '/messages']);
const REST_ROUTES: Record<string, (ctx: RestContext, body: unknown) => Promise<unknown>> = {
  '/retrieve': handleRetrieve,
  '/search': handleFlashSearch,
  '/batch_search': handleFlashBatchSearch,
};

/**
 * One HTTP server for every transport: MCP Streamable HTTP (/mcp), legacy
 * SSE (/sse, /messages), the REST compatibility routes, /health, /ready and
 * /metrics. Errors are JSON bodies with a code and a message, never a stack.
 */
export function createHttpServer(app: HttpApp, opts: HttpOptions): Server {
  const server = createServer((req, res) => {
    void handle(app, opts, req, res).catch((err: unknown) => {
      app.log.error(`unhandled: ${(err as Error).message}`);
      if (!res.headersSent) sendError(res, 'INTERNAL', 'internal error (see the server log)');
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 120_000; // slow or stalled clients cannot hold a socket forever
  return server;
}

async function handle(app: HttpApp, opts: HttpOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = performance.now();
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  const route = routeLabel(path);
  let outcome = 'ok';
  let mode = '';
  res.on('close', () => {
    app.metrics.requests.inc({ route, status: outcome });
    app.metrics.latency.observe((performance.now() - started) / 1000, mode ? { route, mode } : { route });
    if (outcome !== 'ok') app.metrics.errors.inc({ route, code: outcome });
  });
  const fail = (code: string, message: string, headers: Record<string, string> = {}): void => {
    outcome = code;
    if (code === 'OVERLOADED') app.metrics.rejected.inc({ route });
    const status = httpErrorStatus(code);
    if (status === 503) headers['retry-after'] ??= code === 'NOT_READY' ? '5' : '1';
    sendJson(res, status, { error: { code, message } }, headers);
  };

  const origin = header(req, 'origin');
  const cors = origin !== undefined && opts.corsOrigins.includes(origin);
  if (cors) {
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('vary', 'Origin');
    res.setHeader('access-control-expose-headers', 'mcp-session-id');
  }
  if (req.method === 'OPTIONS' && cors) {
    res.writeHead(204, {
      'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
      'access-control-allow-headers':
        'content-type, authorization, mcp-session-id, mcp-protocol-version, last-event-id',
      'access-control-max-age': '600',
    });
    res.end();
    return;
  }
  if (path === '/health') {
    sendJson(res, 200, { status: 'ok' });
    return;
  }
  if (opts.authToken !== undefined && !tokenMatches(header(req, 'authorization'), opts.authToken)) {
    fail('UNAUTHORIZED', 'missing or wrong bearer token: send "Authorization: Bearer <token>"', {
      'www-authenticate': 'Bearer',
    });
    return;
  }
  if (MCP_ROUTES.has(path) && !originAllowed(origin, opts.allowedOrigins)) {
    fail('FORBIDDEN', `origin ${origin} is not allowed: add it with --allowed-origins`);
    return;
  }
  if (path === '/metrics' && req.method === 'GET') {
    const body = app.metrics.registry.render();
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
    res.end(body);
    return;
  }
  const retriever = app.retriever();
  if (path === '/ready' && req.method === 'GET') {
    if (retriever) sendJson(res, 200, { status: 'ready', corpora: retriever.corpora.map((c) => c.name) });
    else fail('NOT_READY', 'loading indexes and warming the encoder');
    return;
  }
  const restHandler = REST_ROUTES[path];
  if (!restHandler && !MCP_ROUTES.has(path)) {
    fail(
      'NOT_FOUND',
      `no route ${req.method} ${path}: see README for /mcp, /sse, /retrieve, /search, /health, /ready, /metrics`,
    );
    return;
  }
  if (!retriever) {
    fail('NOT_READY', 'the server is still loading indexes and warming the encoder; retry shortly');
    return;
  }
  if (app.admission.inFlight >= app.admission.opts.maxInFlight) {
    fail(
      'OVERLOADED',
      `the server is at its limit of ${app.admission.opts.maxInFlight} requests in flight: retry shortly`,
    );
    return;
  }

  try {
    if (path === '/sse') {
      if (req.method !== 'GET') throw new HttpError('METHOD_NOT_ALLOWED', 'use GET /sse to open an SSE stream');
      await app.mcp()?.handleSse(req, res);
      return;
    }
    let body: unknown;
    if (req.method === 'POST') body = parseJsonBody(req, await readBody(req, opts.maxBodyBytes));
    if (restHandler) {
      if (req.method !== 'POST') throw new HttpError('METHOD_NOT_ALLOWED', `use POST ${path} with a JSON body`);
      mode = typeof (body as { mode?: unknown })?.mode === 'string' ? String((body as { mode: string }).mode) : '';
      const result = await restHandler(app.rest() as RestContext, body);
      sendJson(res, 200, result);
      return;
    }
    if (path === '/messages') {
      if (req.method !== 'POST') throw new HttpError('METHOD_NOT_ALLOWED', 'use POST /messages?sessionId=…');
      await app.mcp()?.handleSseMessage(req, res, body);
      return;
    }
    await app.mcp()?.handleMcp(req, res, body);
  } catch (err) {
    if (err instanceof HttpError) {
      fail(err.code, err.message, err.code === 'METHOD_NOT_ALLOWED' ? { allow: path === '/sse' ? 'GET' : 'POST' } : {});
      return;
    }
    outcome = sendThrown(res, err, (m) => app.log.error(m));
  }
}

function routeLabel(path: string): string {
  return REST_ROUTES[path] || MCP_ROUTES.has(path) || ['/health', '/ready', '/metrics'].includes(path) ? path : 'other';
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

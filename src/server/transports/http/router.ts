import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Retriever } from '../../../search/retriever.js';
import { SEARCH_MODES } from '../../../search/types.js';
import { describeError, describeValue } from '../../../errors.js';
import type { Logger } from '../../../util/log.js';
import type { Admission, Lease } from '../../admission.js';
import { answerLeases, answerRefusal, type AnswerGate } from '../../answer-size.js';
import { readableId, type RequestId } from '../../mcp/wire-rules.js';
import { limitConnections, type ConnectionLimits, type ConnectionStats } from './connections.js';
import {
  hostAllowed,
  HttpError,
  originAllowed,
  parseJsonBody,
  readBody,
  sendError,
  sendJson,
  sendRpcRefusal,
  sendThrown,
  statusFor,
  tokenMatches,
} from './http-util.js';
import type { McpHttp } from './mcp-http.js';
import { sendPage } from './page.js';
import type { ServerMetrics } from '../../server-metrics.js';
import {
  handleFlashBatchSearch,
  handleFlashSearch,
  handleRetrieve,
  JsonList,
  type RestAnswer,
  type RestContext,
} from '../../rest/rest.js';

export interface HttpOptions {
  authToken?: string;
  /** Browser origins allowed on the MCP endpoints besides localhost. */
  allowedOrigins: string[];
  /** Origins that get CORS headers (browser clients); empty = no CORS. */
  corsOrigins: string[];
  maxBodyBytes: number;
  /**
   * Host names (no port) the server answers; `null` turns the check off (bound beyond loopback with
   * a token). Guards every route against DNS rebinding, where a page's script reaches 127.0.0.1.
   */
  allowedHosts: readonly string[] | null;
  connections: ConnectionLimits;
}

/** What the router needs; `retriever` is undefined until indexes are loaded and warm. */
export interface RouterContext {
  retriever(): Retriever | undefined;
  /** What is not ready yet, for 503 messages (each corpus's build phase, percent and ETA). */
  readiness(): string;
  /** True when the corpora failed to open, or stopped serving (a damaged file found while serving). */
  failed(): boolean;
  mcp(): McpHttp | undefined;
  rest(): RestContext | undefined;
  admission: Admission;
  /** Memory the answers in flight may hold: searches are admitted by their answer's estimated size. */
  answers: AnswerGate;
  metrics: ServerMetrics;
  log: Logger;
  /** True once a stop signal arrived: every answer closes its connection, searches get 503. */
  draining(): boolean;
}

const MCP_ROUTES = new Set(['/mcp', '/sse', '/messages']);
const REST_ROUTES: ReadonlyMap<string, (ctx: RestContext, body: unknown) => Promise<RestAnswer>> = new Map([
  ['/retrieve', handleRetrieve],
  ['/search', handleFlashSearch],
  ['/batch_search', handleFlashBatchSearch],
]);

/**
 * One HTTP server for every transport: MCP Streamable HTTP (/mcp), legacy
 * SSE (/sse, /messages), the REST compatibility routes, /health, /ready and
 * /metrics. Errors are JSON bodies with a code and a message, never a stack.
 */
export function createHttpServer(
  app: RouterContext,
  opts: HttpOptions,
): { server: Server; connections: ConnectionStats } {
  // how often Node looks for connections past their header timeout (default 30 s)
  const server = createServer({ connectionsCheckingInterval: 1000 }, (req, res) => {
    const x = exchange(app, req, res);
    void handle(app, opts, x).catch((err: unknown) => {
      app.log.error(`unhandled: ${(err as Error).message}`);
      if (!res.headersSent) x.fail('INTERNAL', 'internal error (see the server log)');
      else res.destroy();
    });
  });
  // "Expect: 100-continue": a body declared over the limit gets its 413 before any of it is sent
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (!(Number(req.headers['content-length']) > opts.maxBodyBytes)) res.writeContinue();
    server.emit('request', req, res);
  });
  // A client that sends its request and then half-closes (shutdown(SHUT_WR): `nc -N`, HTTP/1.0-style
  // tools, some proxies) still gets its answer: by default Node aborts the request at the client's FIN
  // and ends the socket before a search that is not cached can answer. The socket is ended after the
  // answer instead (Node's own http server property, set since Node 0.x).
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = 120_000; // slow or stalled clients cannot hold a socket forever
  const connections = limitConnections(server, opts.connections);
  return { server, connections };
}

/** One request's bookkeeping: its route label, outcome and mode for the metrics, and how it fails. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  path: string;
  /** The latency metric's mode label: one of the modes or empty, never the client's string. */
  mode: string;
  /** The JSON-RPC id of an MCP request, once its body is read: its refusals carry it. */
  rpcId: RequestId | null;
  /** When the request arrived, ms (performance.now). */
  started: number;
  /** Answers with an error: JSON-RPC's shape on MCP routes, `{error: {code, message}}` elsewhere. */
  fail(code: string, message: string, headers?: Record<string, string>, rpcCode?: number): void;
  /** Records the outcome of an answer sent elsewhere (an error code, or 'ok'). */
  settle(outcome: string): void;
}

async function handle(app: RouterContext, opts: HttpOptions, x: Exchange): Promise<void> {
  const { res } = x;
  if (app.draining()) res.setHeader('connection', 'close');
  if (refusedBeforeAdmission(app, opts, x)) return;
  const refusal = admissionRefusal(app, x.path);
  if (refusal) {
    x.fail(refusal.code, refusal.message);
    return;
  }
  const retriever = app.retriever() as Retriever;
  if (x.path === '/ready') {
    const trouble = await engineTrouble(retriever);
    if (trouble) return x.fail('NOT_READY', trouble);
    // every arm published, or (with ?mode=bm25) BM25 serving while a first build embeds
    const pending = retriever.pendingStatus();
    const bm25Only = readyMode(x.req) === 'bm25';
    if (pending.length > 0 && !bm25Only) {
      return x.fail('NOT_READY', `still building: ${pending.join('; ')} (/ready?mode=bm25 says whether BM25 serves)`);
    }
    sendJson(res, 200, {
      status: 'ready',
      ...(bm25Only ? { mode: 'bm25' } : {}),
      corpora: retriever.corpora.map((c) => c.name),
      ...(pending.length > 0 ? { building: pending } : {}),
    });
    return;
  }
  try {
    await dispatch(app, opts, x);
  } catch (err) {
    if (err instanceof HttpError) {
      const allow: Record<string, string> =
        err.code === 'METHOD_NOT_ALLOWED' ? { allow: x.path === '/sse' ? 'GET' : 'POST' } : {};
      x.fail(err.code, err.message, allow, err.rpcCode);
      return;
    }
    if (MCP_ROUTES.has(x.path)) {
      app.log.error(`internal error: ${describeError(err)}`);
      x.fail('INTERNAL', 'internal error (see the server log)');
      return;
    }
    x.settle(sendThrown(res, err, (m) => app.log.error(m)));
  }
}

function exchange(app: RouterContext, req: IncomingMessage, res: ServerResponse): Exchange {
  const started = performance.now();
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  const route = routeLabel(path);
  let outcome = 'ok';
  const x: Exchange = {
    req,
    res,
    path,
    mode: '',
    rpcId: null,
    started,
    settle: (o) => (outcome = o),
    fail: (code, message, headers = {}, rpcCode) => {
      outcome = code;
      if (code === 'OVERLOADED') app.metrics.rejected.inc({ route });
      if (statusFor(code) === 413) {
        // the rest of the body is never read: close rather than drain a 200 MB upload
        headers['connection'] = 'close';
        closeUnread(req);
      }
      if (MCP_ROUTES.has(path))
        sendRpcRefusal(res, code, message, { id: x.rpcId, headers, ...(rpcCode ? { rpcCode } : {}) });
      else sendError(res, code, message, headers);
    },
  };
  res.on('close', () => {
    app.metrics.requests.inc({ route, status: outcome });
    app.metrics.latency.observe((performance.now() - started) / 1000, x.mode ? { route, mode: x.mode } : { route });
    if (outcome !== 'ok') app.metrics.errors.inc({ route, code: outcome });
  });
  return x;
}

/** Host, CORS, /health, token, Origin and /metrics: answered (true) before anything needs the retriever. */
function refusedBeforeAdmission(app: RouterContext, opts: HttpOptions, x: Exchange): boolean {
  const { req, res, path } = x;
  if (opts.allowedHosts && !hostAllowed(req.headers.host, opts.allowedHosts)) {
    x.fail(
      'FORBIDDEN',
      `Host ${describeValue(req.headers.host ?? '')} is not one this server answers (${opts.allowedHosts.join(', ')}): ` +
        'add the name with --allowed-hosts',
    );
    return true;
  }
  const origin = header(req, 'origin');
  if (applyCors(req, res, origin, opts)) return true;
  if (path === '/health') {
    sendJson(res, 200, { status: 'ok' });
    return true;
  }
  const authorized =
    opts.authToken === undefined ||
    tokenMatches(header(req, 'authorization'), opts.authToken) ||
    (path === '/' && pageTokenMatches(req, opts.authToken));
  if (!authorized && path === '/ready') {
    // readiness probes carry no token: they get the status alone, no corpus names or messages
    void readyStatus(app, req).then((ready) =>
      ready ? sendJson(res, 200, { status: 'ready' }) : x.fail('NOT_READY', 'not ready'),
    );
    return true;
  }
  if (!authorized) {
    const how = path === '/' ? 'open /?token=<token> in the browser' : 'send "Authorization: Bearer <token>"';
    x.fail('UNAUTHORIZED', `missing or wrong bearer token: ${how}`, {
      'www-authenticate': 'Bearer',
    });
    return true;
  }
  if (MCP_ROUTES.has(path) && !originAllowed(origin, opts.allowedOrigins)) {
    x.fail('FORBIDDEN', `origin ${describeValue(origin)} is not allowed: add it with --allowed-origins`);
    return true;
  }
  if (path === '/' && (req.method === 'GET' || req.method === 'HEAD')) {
    sendPage(res);
    return true;
  }
  if (path === '/metrics' && req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
    res.end(app.metrics.registry.render());
    return true;
  }
  return false;
}

/** The page alone takes its token from the address (`/?token=…`): a browser sends no header when one types it. */
function pageTokenMatches(req: IncomingMessage, token: string): boolean {
  const given = new URL(req.url ?? '/', 'http://x').searchParams.get('token');
  return given !== null && tokenMatches(`Bearer ${given}`, token);
}

/** A corpus in an engine is ready only while the engine answers: why one does not (every node down), if any. */
async function engineTrouble(r: Retriever): Promise<string | undefined> {
  for (const c of r.corpora) {
    const why = c.kind === 'engine' ? await c.unreachable() : undefined;
    if (why) return `corpus ${c.name}: ${why}`;
  }
  return undefined;
}

/** Whether the server would answer /ready with 200: loaded, not draining, and every engine reachable. */
async function readyStatus(app: RouterContext, req: IncomingMessage): Promise<boolean> {
  const r = app.retriever();
  if (r === undefined || app.draining() || (await engineTrouble(r)) !== undefined) return false;
  return readyMode(req) === 'bm25' || r.pendingStatus().length === 0;
}

/** `/ready?mode=bm25` asks whether BM25 serves, before a first build's dense arm is published. */
function readyMode(req: IncomingMessage): string | null {
  return new URL(req.url ?? '/', 'http://x').searchParams.get('mode');
}

/** The routes that search: SSE, the REST compatibility routes and MCP. */
async function dispatch(app: RouterContext, opts: HttpOptions, x: Exchange): Promise<void> {
  const { req, res, path } = x;
  if (path === '/sse') {
    if (req.method !== 'GET') throw new HttpError('METHOD_NOT_ALLOWED', 'use GET /sse to open an SSE stream');
    endWithClient(req, res);
    await app.mcp()?.handleSse(req, res);
    return;
  }
  let body: unknown;
  if (req.method === 'POST') body = parseJsonBody(req, await readBody(req, opts.maxBodyBytes));
  if (MCP_ROUTES.has(path)) x.rpcId = readableId(body);
  const restHandler = REST_ROUTES.get(path);
  if (restHandler) {
    if (req.method !== 'POST') throw new HttpError('METHOD_NOT_ALLOWED', `use POST ${path} with a JSON body`);
    app.metrics.stage.observe((performance.now() - x.started) / 1000, { stage: 'read' });
    const lease = admitAnswer(app, x, app.answers.sizer.rest(path, body));
    if (lease === false) return;
    x.mode = modeLabel(body);
    const { body: result, scoreKind } = await withLease(lease, () =>
      inTurn(app, () => restHandler(app.rest() as RestContext, body)),
    );
    const answered = performance.now();
    res.once('finish', () => app.metrics.stage.observe((performance.now() - answered) / 1000, { stage: 'write' }));
    res.setHeader('x-score-kind', scoreKind);
    if (result instanceof JsonList)
      await sendJsonList(res, result, (work) => (app.retriever() as Retriever).inTurn(work));
    else sendJson(res, 200, result);
    return;
  }
  if (path === '/messages') {
    if (req.method !== 'POST') throw new HttpError('METHOD_NOT_ALLOWED', 'use POST /messages?sessionId=…');
    await inTurn(app, async () => app.mcp()?.handleSseMessage(req, res, body));
    return;
  }
  if (req.method === 'GET') endWithClient(req, res);
  const messages = Array.isArray(body) ? body : [body];
  const lease = admitAnswer(
    app,
    x,
    messages.reduce((n: number, m) => n + app.answers.sizer.mcp(m), 0),
  );
  if (lease === false) return;
  await withLease(lease, () => inTurn(app, async () => app.mcp()?.handleMcp(req, res, body)));
}

/**
 * Starts a request's handling (an MCP message's, a REST search's) in a turn of the retriever's
 * queue (TurnQueue), where the searches' steps take theirs: the SDK's work on a call (a transport, schema checks, the answer's
 * validation and JSON) is a millisecond or more, and done as each request arrived it ran
 * unbounded between two turns, so under 128 clients calling `fetch` a search waited a whole round
 * of them for each of its steps (128 /retrieve clients made one call each in 15 s). In its turn,
 * every request's work waits in one line, first come first served.
 */
async function inTurn<T>(app: RouterContext, start: () => Promise<T>): Promise<T> {
  const r = app.retriever();
  if (!r) return start();
  const { started } = await r.admitInTurn(() => ({ started: start() }));
  return started;
}

/** Runs a request's work where its answer lease is found (answerLeases), when it holds one. */
function withLease<T>(lease: Lease | undefined, work: () => Promise<T>): Promise<T> {
  return lease ? answerLeases.run(lease, work) : work();
}

/**
 * Holds `bytes` of the answer budget until the answer has been sent (or the
 * client has gone), or refuses the request with 503 when the answers in
 * flight leave no room: the lease (undefined when the request holds no
 * answer), or false when it was refused.
 */
function admitAnswer(app: RouterContext, x: Exchange, bytes: number): Lease | undefined | false {
  if (bytes === 0) return undefined;
  const lease = app.answers.budget.tryReserve(bytes);
  if (!lease) {
    x.fail('OVERLOADED', answerRefusal(app.answers.budget, bytes));
    return false;
  }
  x.res.once('close', lease.release);
  return lease;
}

/**
 * Ends a stream when its client half-closes. Half-open sockets stay open so
 * that `nc -N` gets its answer (createHttpServer), but a stream has no end of
 * its own: without this a dropped SSE client's socket sat in CLOSE-WAIT and
 * its session held a place until the TTL, refusing the client's reconnect.
 */
function endWithClient(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket;
  const end = (): void => void res.destroy();
  if (socket.readableEnded) return end();
  socket.once('end', end);
  res.once('close', () => socket.off('end', end));
}

/**
 * Ends a connection whose request body is left unread. Node closes a
 * "Connection: close" socket as soon as the answer is written (`destroySoon`),
 * and closing with unread data resets the connection: a client still sending
 * the body then loses the 413 it had not read yet (its kernel drops it). So
 * this connection's close is replaced: our FIN goes out after the answer,
 * reading stops (the sender's window fills and it blocks instead of
 * uploading 200 MB), and the socket is destroyed a moment later.
 */
function closeUnread(req: IncomingMessage): void {
  const socket: Socket & { destroySoon?: () => void } = req.socket;
  socket.destroySoon = () => {
    socket.end();
    setImmediate(() => socket.pause()); // after Node's own discard of the body has resumed it
    setTimeout(() => socket.destroy(), UNREAD_LINGER_MS).unref();
  };
}

/** How long a connection closed with its request body unread lingers, ms. */
const UNREAD_LINGER_MS = 500;

/** Writes a JsonList, serialising one item a turn and waiting for the socket when its buffer is full. */
async function sendJsonList(
  res: ServerResponse,
  list: JsonList,
  inTurn: (work: () => string) => Promise<string>,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  res.write(list.before);
  for (let i = 0; i < list.items.length; i++) {
    if (res.destroyed) return; // the client went away
    const piece = await inTurn(() => JSON.stringify(list.items[i]));
    if (!res.write(i === 0 ? piece : `,${piece}`)) {
      await new Promise((r) => {
        res.once('drain', r);
        res.once('close', r);
      });
    }
  }
  res.end(list.after);
}

/** Answers a CORS preflight (true: done); otherwise adds the CORS headers an allowed origin gets. */
function applyCors(req: IncomingMessage, res: ServerResponse, origin: string | undefined, opts: HttpOptions): boolean {
  const cors = origin !== undefined && opts.corsOrigins.includes(origin);
  if (!cors) return false;
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('vary', 'Origin');
  res.setHeader('access-control-expose-headers', 'mcp-session-id');
  if (req.method !== 'OPTIONS') return false;
  res.writeHead(204, {
    'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
    'access-control-allow-headers': 'content-type, authorization, mcp-session-id, mcp-protocol-version, last-event-id',
    'access-control-max-age': '600',
  });
  res.end();
  return true;
}

/** Why a route that needs the retriever cannot be served now, if it cannot: unknown, loading, stopping or full. */
function admissionRefusal(app: RouterContext, path: string): { code: string; message: string } | undefined {
  if (path !== '/ready' && !REST_ROUTES.has(path) && !MCP_ROUTES.has(path)) {
    return {
      code: 'NOT_FOUND',
      message: `no route ${describeValue(path)}: see README for / (a page), /mcp, /sse, /retrieve, /search, /health, /ready, /metrics`,
    };
  }
  if (app.draining())
    return { code: 'SHUTTING_DOWN', message: 'the server is shutting down: retry on another instance' };
  // MCP answers initialize, tools/list and list_corpora while a first run builds; its searches say "not ready"
  if (!app.retriever() && !(MCP_ROUTES.has(path) && app.mcp())) {
    return {
      code: 'NOT_READY',
      message: app.failed()
        ? `not serving: ${app.readiness()}`
        : `the server is still loading indexes and warming the encoder (${app.readiness()}); retry shortly`,
    };
  }
  if (path !== '/ready' && app.admission.inFlight >= app.admission.opts.maxInFlight) {
    return {
      code: 'OVERLOADED',
      message: `the server is at its limit of ${app.admission.opts.maxInFlight} requests in flight: retry shortly`,
    };
  }
  return undefined;
}

/** The latency label for a REST request's mode: one of the modes, never the client's own string. */
function modeLabel(body: unknown): string {
  const m = typeof body === 'object' && body !== null ? (body as { mode?: unknown }).mode : undefined;
  return typeof m === 'string' && (SEARCH_MODES as readonly string[]).includes(m) ? m : '';
}

function routeLabel(path: string): string {
  return REST_ROUTES.has(path) || MCP_ROUTES.has(path) || ['/', '/health', '/ready', '/metrics'].includes(path)
    ? path
    : 'other';
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

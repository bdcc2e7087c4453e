/**
 * The one importer of OpenSearch's official Node.js client. Everything else
 * in engine/ talks to the cluster through `EngineClient`: one request call
 * over the client's transport, which spreads requests across the given nodes,
 * marks a node that stops answering as dead, retries on the next one and
 * pings the dead one back in later.
 */
import { Client, ConnectionPool, errors } from '@opensearch-project/opensearch';
import { RetrieverError } from '../../errors.js';

export interface EngineClientOptions {
  /** Node URLs, e.g. http://10.0.0.1:9200; user:password@ in a URL is sent as basic auth. */
  nodes: readonly string[];
  /** Retries of a request on another node after a connection error or a 502/503/504. */
  maxRetries?: number;
  requestTimeoutMs?: number;
}

export interface EngineRequest {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE' | 'HEAD';
  path: string;
  body?: unknown;
  /** Newline-delimited bodies (_bulk, _msearch). */
  ndjson?: unknown[];
  query?: Record<string, string | number | boolean>;
  /** Statuses answered as results rather than errors (e.g. 404 for "not there"). */
  allow?: number[];
  /** One try, within this many ms (a health probe), instead of the client's retries and timeout. */
  probeMs?: number;
}

export interface EngineClient {
  /** The nodes, without credentials: for logs and messages. */
  readonly location: string;
  request<T = Record<string, unknown>>(req: EngineRequest): Promise<{ status: number; body: T }>;
  close(): Promise<void>;
}

export function connectEngine(opts: EngineClientOptions): EngineClient {
  if (opts.nodes.length === 0) throw new RetrieverError('BAD_INPUT', '--backend needs at least one node URL');
  const urls = opts.nodes.map(parseNodeUrl);
  const location = urls.map((u) => `${u.protocol}//${u.host}`).join(',');
  const client = new Client({
    nodes: urls.map((u) => u.toString()),
    maxRetries: opts.maxRetries ?? 3,
    requestTimeout: opts.requestTimeoutMs ?? 30_000,
    pingTimeout: 1_000,
    resurrectStrategy: 'ping',
    ConnectionPool: PromptResurrectPool,
  });
  return {
    location,
    async request<T>(req: EngineRequest): Promise<{ status: number; body: T }> {
      try {
        const res = await client.transport.request(
          {
            method: req.method,
            path: req.path,
            ...(req.body !== undefined ? { body: req.body as Record<string, unknown> } : {}),
            ...(req.ndjson !== undefined ? { bulkBody: req.ndjson as Array<Record<string, unknown>> } : {}),
            ...(req.query !== undefined ? { querystring: req.query } : {}),
          },
          {
            ...(req.allow ? { ignore: req.allow } : {}),
            ...(req.probeMs !== undefined ? { requestTimeout: req.probeMs, maxRetries: 0 } : {}),
          },
        );
        return { status: res.statusCode ?? 200, body: res.body as T };
      } catch (err) {
        throw engineError(err, req, location);
      }
    },
    close: () => client.close(),
  };
}

/**
 * The client's pool, trying a node it marked dead again after 2 s, doubling to at most 16 s (its
 * default: 60 s, doubling to 32 minutes). After a whole-cluster outage the nodes come back marked
 * dead; with the default, a later single-node failure found the one node marked alive gone and
 * every retry sent to the dead ones for minutes (502s through a failover the cluster survived).
 */
class PromptResurrectPool extends ConnectionPool {
  constructor(...args: ConstructorParameters<typeof ConnectionPool>) {
    super(...args);
    this.resurrectTimeout = 2_000;
    this.resurrectTimeoutCutoff = 3;
  }
}

function parseNodeUrl(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new RetrieverError('BAD_INPUT', `--backend "${raw.slice(0, 200)}" is not a URL: give http://HOST:9200`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new RetrieverError('BAD_INPUT', `--backend ${u.host}: use an http:// or https:// URL, not ${u.protocol}`);
  }
  return u;
}

/** A one-line RetrieverError: the engine's own reason where it gave one, else why it could not be reached. */
function engineError(err: unknown, req: EngineRequest, location: string): RetrieverError {
  const what = `${req.method} ${req.path}`;
  if (err instanceof errors.ResponseError) {
    const body = err.body as { error?: { type?: string; reason?: string; root_cause?: Array<{ reason?: string }> } };
    const reason = body?.error?.root_cause?.[0]?.reason ?? body?.error?.reason ?? err.message;
    const status = err.statusCode ?? 0;
    if (status === 401 || status === 403) {
      return new RetrieverError(
        'ENGINE',
        `the engine at ${location} refused ${what} (${status}): put the user and password in the URL, http://USER:PASSWORD@HOST:9200`,
      );
    }
    return new RetrieverError('ENGINE', `the engine at ${location} answered ${status} to ${what}: ${reason}`, {
      cause: err,
    });
  }
  if (
    err instanceof errors.ConnectionError ||
    err instanceof errors.NoLivingConnectionsError ||
    err instanceof errors.TimeoutError
  ) {
    return new RetrieverError(
      'ENGINE',
      `cannot reach the engine at ${location} (${what}: ${err.message}): is the cluster up? Check it with curl ${location.split(',')[0]}/_cluster/health`,
      { cause: err },
    );
  }
  return new RetrieverError('ENGINE', `${what} on ${location} failed: ${(err as Error).message}`, { cause: err });
}

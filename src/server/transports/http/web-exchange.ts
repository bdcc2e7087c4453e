import type { McpHttpHandler } from '@modelcontextprotocol/server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RPC, rpcError, readableId } from '../../mcp/wire-rules.js';

/**
 * Serves one request, whose JSON body the router has already read and parsed,
 * on the SDK's web-standard handler (`createMcpHandler`). The SDK's own Node
 * adapter (`toNodeHandler`) serializes a parsed body again into a body stream
 * the handler never reads when it is handed the parsed value too, and answers
 * through a stream reader even when the answer is one JSON document; over
 * HTTP that conversion was a tenth of a 2026-07-28 call's CPU. Here the
 * `Request` carries the method, URL, headers and an abort signal (the client
 * going away), the parsed body goes beside it, and a JSON answer is written
 * in one piece; an SSE answer is still streamed, with write backpressure.
 */
export async function serveOnWebHandler(
  handler: McpHttpHandler,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  onerror: (err: Error) => void,
): Promise<void> {
  const abort = new AbortController();
  let finished = false;
  res.once('close', () => {
    if (!finished) abort.abort();
  });
  let response: Response;
  try {
    response = await handler.fetch(toRequest(req, abort.signal), { parsedBody: body });
  } catch (err) {
    onerror(err instanceof Error ? err : new Error(String(err)));
    response = Response.json(rpcError(readableId(body), RPC.INTERNAL_ERROR, 'internal server error'), { status: 500 });
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  // the client went away, or the server answered for the handler while it shut down
  if (res.destroyed || res.headersSent) {
    finished = true;
    await response.body?.cancel().catch(() => undefined);
    return;
  }
  if (response.body === null) {
    finished = true;
    res.writeHead(response.status, headers).end();
    return;
  }
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    // one JSON document: sent with its length, not chunked
    const bytes = Buffer.from(await response.arrayBuffer());
    finished = true;
    if (res.headersSent) return;
    res.writeHead(response.status, { ...headers, 'content-length': String(bytes.length) }).end(bytes);
    return;
  }
  res.writeHead(response.status, headers);
  await streamOut(response.body, res, abort.signal);
  finished = true;
  res.end();
}

function toRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    // the body travels parsed, beside the Request: these describe bytes it does not carry
    if (name === 'content-length' || name === 'transfer-encoding' || name === 'content-encoding') continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  const host = req.headers.host ?? 'localhost';
  return new Request(`http://${host}${req.url ?? '/'}`, { method: req.method ?? 'POST', headers, signal });
}

/** Writes an SSE answer as it comes, waiting for 'drain' when the socket is full; stops if the client goes. */
async function streamOut(body: ReadableStream<Uint8Array>, res: ServerResponse, gone: AbortSignal): Promise<void> {
  const reader = body.getReader();
  const closed = new Promise<void>((resolve) => gone.addEventListener('abort', () => resolve(), { once: true }));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || gone.aborted) break;
      if (!res.write(value)) await Promise.race([new Promise((resolve) => res.once('drain', resolve)), closed]);
    }
  } catch {
    // the stream failed or was cancelled: end what was sent
  } finally {
    if (gone.aborted) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

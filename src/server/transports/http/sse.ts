import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './http-util.js';
import type { SessionRegistry } from './sessions.js';

/**
 * The legacy MCP SSE transport (FastMCP SSE clients): GET /sse opens a
 * session's event stream; its messages arrive at POST /messages?sessionId=…
 * Sessions share the registry (cap and TTL) with Streamable HTTP.
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
  const transport = new SSEServerTransport('/messages', res);
  const server = makeServer();
  registry.add(transport.sessionId, { transport, server, lastUsed: Date.now() });
  transport.onclose = () => registry.forget(transport.sessionId);
  res.on('close', () => void registry.close(transport.sessionId));
  await server.connect(transport);
}

export async function postSseMessage(
  registry: SessionRegistry,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  const sid = new URL(req.url ?? '/', 'http://x').searchParams.get('sessionId') ?? '';
  const s = registry.use(sid, SSEServerTransport);
  if (!s) {
    sendJson(res, 404, {
      error: { code: 'NOT_FOUND', message: `unknown SSE session "${sid.slice(0, 64)}": open GET /sse first` },
    });
    return;
  }
  await s.transport.handlePostMessage(req, res, body);
}

import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  /** Open TCP connections at most; past it the longest-idle one is closed. */
  maxConnections: number;
  /** A connection must finish sending a request's headers within this, ms (from its start or its last request). */
  headersTimeoutMs: number;
}

export interface ConnectionStats {
  readonly open: number;
  readonly evicted: number;
}

/**
 * Caps open connections without ever refusing a live request: a connection
 * is *idle* from its accept, and again after each answer, until its next
 * request arrives; when a new connection would pass the cap, the one idle
 * longest is closed (a keep-alive socket nobody uses, or one that never sent
 * a byte). Only when every other connection has a request in flight is the
 * new one closed instead. So 20k silent sockets cannot starve /health or
 * /retrieve: each new client pushes out the oldest silent one.
 *
 * Node enforces the header timeout itself; `connectionsCheckingInterval`
 * (set where the server is made) decides how promptly.
 */
export function limitConnections(server: Server, limits: ConnectionLimits): ConnectionStats {
  const idle = new Set<Socket>(); // in order of becoming idle: the first is the longest idle
  const busy = new Set<Socket>();
  let evicted = 0;
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = Math.max(server.requestTimeout, limits.headersTimeoutMs);
  server.on('connection', (socket: Socket) => {
    idle.add(socket);
    socket.once('close', () => {
      idle.delete(socket);
      busy.delete(socket);
    });
    if (idle.size + busy.size > limits.maxConnections) {
      const oldest = idle.values().next().value as Socket; // the new socket itself when all others are busy
      idle.delete(oldest);
      evicted++;
      oldest.destroy();
    }
  });
  server.on('request', (req, res) => {
    const socket = req.socket;
    idle.delete(socket);
    busy.add(socket);
    res.once('close', () => {
      if (!busy.delete(socket) || socket.destroyed) return;
      idle.add(socket);
    });
  });
  return {
    get open() {
      return idle.size + busy.size;
    },
    get evicted() {
      return evicted;
    },
  };
}

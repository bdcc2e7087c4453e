import { parseJSONRPCMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server';
import type { Readable, Writable } from 'node:stream';
import type { Lease } from '../../admission.js';
import { answerLeases } from '../../answer-size.js';
import {
  batchRefusal,
  hasEnvelopeClaim,
  in2025Codes,
  readableId,
  RPC,
  screenMessage,
  type ErrorAnswer,
  type RequestId,
} from '../../mcp/wire-rules.js';

export interface StdioTransportOptions {
  /** Longest JSON-RPC line accepted, bytes; a longer one is answered with an error and skipped. */
  maxLineBytes: number;
  /** Requests handed to the server at once; further lines wait, and stdin pauses (backpressure). */
  maxPending: number;
  /** Where refused lines are reported (stderr: stdout belongs to MCP). */
  warn: (message: string) => void;
  /**
   * The memory a request's answer may hold until it is written, or undefined
   * while the answers in flight leave no room (the request then waits: stdio
   * has one client, which is slowed, never refused). None: no byte admission.
   */
  answerLease?: (request: JSONRPCMessage) => Lease | undefined;
}

/**
 * MCP over stdin/stdout, one JSON-RPC message a line. The SDK's transport
 * ended the session on a line over its 10 MiB buffer (exit 0, no word why),
 * let any burst through at once (a client sending 5,000 requests had 78%
 * refused by admission control) and added a 'drain' listener per message
 * under output pressure. This one skips an oversized line with a JSON-RPC
 * error and goes on, answers unparseable lines with a parse error, holds at
 * most `maxPending` requests in the server and pauses stdin beyond that, so
 * a burst is slowed rather than refused, and waits for one 'drain' at a time.
 * A request counts as pending until its answer has drained to the pipe, so a
 * client that stops reading stops the server reading too: its answers never
 * pile up in memory. Each message is screened on its own (wire-rules.ts),
 * never by what came before on the connection.
 */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];

  private parts: Buffer[] = [];
  private partBytes = 0;
  /** Bytes of an oversized line still being skipped, or -1 when not skipping. */
  private skipping = -1;
  private readonly waiting: JSONRPCMessage[] = [];
  private pending = 0;
  /** Answer memory held by each request in the server, released when its answer has drained. */
  private readonly leases = new Map<RequestId, Lease>();
  /** 2025-era `resources/read` requests in the server: their errors take 2025-11-25's codes. */
  private readonly legacyReads = new Set<RequestId>();
  private drained: Promise<void> | undefined;
  private closed = false;
  /** Resolvers waiting for every request read so far to be answered (`idle`). */
  private idleWaiters: Array<() => void> = [];
  private closedWaiters: Array<() => void> = [];

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    private readonly opts: StdioTransportOptions,
  ) {}

  async start(): Promise<void> {
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onStreamError);
    this.stdin.on('end', this.onEnd);
  }

  get pendingRequests(): number {
    return this.pending;
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return;
    const id = isResponse(message) ? (message as { id: RequestId }).id : undefined;
    const out = id !== undefined && this.legacyReads.delete(id) ? in2025Codes(message) : message;
    await this.writeLine(JSON.stringify(out));
    if (id === undefined) return;
    // the answer has left the process only once the pipe took it: until then it still counts
    while (this.drained) await this.drained;
    this.leases.get(id)?.release();
    this.leases.delete(id);
    this.pending = Math.max(0, this.pending - 1);
    this.deliverWaiting();
    this.wakeIdle();
  }

  /**
   * Resolves once every request read so far has been answered and written:
   * a client that writes its requests and then closes stdin (`printf … |
   * retriever-mcp`) gets every answer before the server exits.
   */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Resolves once the transport is closed (by the server or `close`): the
   * SDK's `serveStdio` owns `onclose`, so the process waits here instead.
   */
  whenClosed(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => this.closedWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return this.closed || (this.pending === 0 && this.waiting.length === 0);
  }

  private wakeIdle(): void {
    if (!this.isIdle()) return;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private async writeLine(json: string): Promise<void> {
    while (this.drained) await this.drained;
    if (this.closed) return;
    if (!this.stdout.write(`${json}\n`)) {
      this.drained = new Promise((resolve) =>
        this.stdout.once('drain', () => {
          this.drained = undefined;
          resolve();
        }),
      );
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onStreamError);
    this.stdin.off('end', this.onEnd);
    this.stdin.pause();
    this.parts = [];
    this.waiting.length = 0;
    for (const lease of this.leases.values()) lease.release();
    this.leases.clear();
    this.wakeIdle();
    this.onclose?.();
    for (const w of this.closedWaiters.splice(0)) w();
  }

  private readonly onData = (chunk: Buffer): void => {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      this.addPart(chunk.subarray(start, nl));
      this.endLine();
      start = nl + 1;
    }
    if (start < chunk.length) this.addPart(chunk.subarray(start));
    this.deliverWaiting();
  };

  private readonly onStreamError = (err: Error): void => this.onerror?.(err);
  /** stdin's end: nothing more to read; the server closes the transport once its answers are out (`idle`). */
  private readonly onEnd = (): void => {
    this.stdin.off('data', this.onData);
    this.deliverWaiting();
    this.wakeIdle();
  };

  private addPart(part: Buffer): void {
    if (part.length === 0) return;
    if (this.skipping >= 0) {
      this.skipping += part.length;
      return;
    }
    if (this.partBytes + part.length > this.opts.maxLineBytes) {
      this.skipping = this.partBytes + part.length;
      this.parts = [];
      this.partBytes = 0;
      return;
    }
    this.parts.push(Buffer.from(part)); // a copy: the chunk's memory is not kept alive by a slice
    this.partBytes += part.length;
  }

  private endLine(): void {
    if (this.skipping >= 0) {
      const bytes = this.skipping;
      this.skipping = -1;
      this.refuse(
        RPC.INVALID_REQUEST,
        `a message of ${bytes} bytes is over the limit of ${this.opts.maxLineBytes} bytes a line: send smaller requests`,
      );
      return;
    }
    const line = Buffer.concat(this.parts).toString('utf8').replace(/\r$/, '');
    this.parts = [];
    this.partBytes = 0;
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.refuse(RPC.PARSE_ERROR, 'Parse error: each line must be one JSON-RPC 2.0 message');
      return;
    }
    // a 2025-03-26 batch is taken apart, each message answered on a line of its own; one holding a
    // 2026-07-28 message is refused whole, as over HTTP
    const batchError = Array.isArray(value) ? batchRefusal(value) : undefined;
    if (batchError) return this.answer(batchError);
    const items: unknown[] = Array.isArray(value) ? value : [value];
    for (const item of items) {
      let message: JSONRPCMessage;
      try {
        message = parseJSONRPCMessage(item);
      } catch {
        this.refuse(RPC.INVALID_REQUEST, `Invalid Request: ${describeInvalid(item)}`, readableId(item));
        continue;
      }
      const screened = screenMessage(message, { checkVersion: true });
      if (screened) this.answer(screened);
      else this.waiting.push(message);
    }
  }

  /**
   * Hands waiting messages to the server while fewer than maxPending requests
   * are in it and the answer budget has room for the next one's answer.
   */
  private deliverWaiting(): void {
    while (this.waiting.length > 0 && !this.closed) {
      const next = this.waiting[0] as JSONRPCMessage;
      const id = 'method' in next && 'id' in next ? (next.id as RequestId) : undefined;
      let lease: Lease | undefined;
      if (id !== undefined) {
        if (this.pending >= this.opts.maxPending) break;
        lease = this.opts.answerLease?.(next);
        if (this.opts.answerLease && !lease) break;
        if (lease) this.leases.set(id, lease);
        if ((next as { method: string }).method === 'resources/read' && !hasEnvelopeClaim(next))
          this.legacyReads.add(id);
        this.pending++;
      }
      this.waiting.shift();
      if (lease) answerLeases.run(lease, () => this.onmessage?.(next));
      else this.onmessage?.(next);
    }
    // read no further than one window of requests ahead
    if (this.waiting.length >= this.opts.maxPending) this.stdin.pause();
    else if (this.stdin.isPaused()) this.stdin.resume();
  }

  /** An error answer; `id` null where the request's own id cannot be read (JSON-RPC 2.0, section 5). */
  private refuse(code: number, message: string, id: RequestId | null = null): void {
    this.answer({ jsonrpc: '2.0', id, error: { code, message } });
  }

  private answer(error: ErrorAnswer): void {
    this.opts.warn(`stdio: ${error.error.message}`);
    void this.writeLine(JSON.stringify(error));
  }
}

/** What is wrong with a message that is JSON but not JSON-RPC 2.0, in a few words. */
function describeInvalid(item: unknown): string {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return 'a message must be a JSON object';
  const m = item as Record<string, unknown>;
  if (m['jsonrpc'] !== '2.0') return '"jsonrpc" must be "2.0"';
  if ('method' in m && typeof m['method'] !== 'string') return '"method" must be a string';
  if ('params' in m && (typeof m['params'] !== 'object' || m['params'] === null)) return '"params" must be an object';
  if ('id' in m && readableId(item) === null && m['id'] !== null) return '"id" must be a string or a number';
  return 'not a JSON-RPC 2.0 request, notification or response';
}

function isResponse(m: JSONRPCMessage): boolean {
  return !('method' in m) && 'id' in m && m.id !== null;
}

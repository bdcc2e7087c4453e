import { request } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request through node:http, with any headers (fetch drops `Host`). */
export function httpRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** A raw TCP connection to the server at `url`. */
export function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname, () => resolve(s));
    s.once('error', reject);
  });
}

/** Resolves when the socket is closed (by either side), with the bytes it received. */
export function whenClosed(s: Socket): Promise<string> {
  let got = '';
  s.on('data', (d: Buffer) => (got += d.toString()));
  s.on('error', () => undefined);
  return new Promise((resolve) => s.once('close', () => resolve(got)));
}

/** Writes one request on an open keep-alive socket and reads one response (Content-Length framed). */
export function exchange(s: Socket, requestText: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer): void => {
      buf += d.toString();
      const end = buf.indexOf('\r\n\r\n');
      if (end === -1) return;
      const [statusLine, ...lines] = buf.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      const len = Number(headers['content-length'] ?? 0);
      if (buf.length < end + 4 + len) return;
      s.off('data', onData);
      s.off('close', onClose);
      resolve({ status: Number(statusLine?.split(' ')[1]), headers, body: buf.slice(end + 4, end + 4 + len) });
    };
    const onClose = (): void => reject(new Error(`socket closed before a response; got ${JSON.stringify(buf)}`));
    s.on('data', onData);
    s.once('close', onClose);
    s.write(requestText);
  });
}

/** A POST /retrieve request as raw HTTP/1.1 text, keep-alive. */
export function retrieveRequest(url: string, body: unknown): string {
  const { host } = new URL(url);
  const text = JSON.stringify(body);
  return (
    `POST /retrieve HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: keep-alive\r\n\r\n${text}`
  );
}

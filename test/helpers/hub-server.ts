import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * A local stand-in for huggingface.co that serves real files from disk under
 * hub-style URLs, with the hub's headers: LFS files (large or .onnx) answer
 * with a 302 to a "CDN" path plus X-Linked-Etag (sha256) / X-Linked-Size;
 * small files answer directly with the git blob sha1 as ETag. Range requests
 * work. Knobs let tests cut a download midway, corrupt bytes, or demand a token.
 */
export interface HubRepo {
  repoType: 'model' | 'dataset';
  repo: string;
  /** Local directory served as the repository root. */
  dir: string;
  /** Optional path remapping: hub path → file under dir. */
  files?: Record<string, string>;
}

export interface HubServerOptions {
  repos: HubRepo[];
  commit?: string;
  /** Hub paths whose first download is cut after half the bytes. */
  cutOnce?: string[];
  /** Hub paths served with one flipped byte. */
  corrupt?: string[];
  token?: string;
  /** "user:password" a mirror demands as HTTP Basic credentials (an HF_ENDPOINT with user info). */
  basic?: string;
  /** Hub paths whose downloads trickle out over this many milliseconds (a slow first run). */
  slowMs?: Record<string, number>;
  /** Hub paths whose GET sends the file, then garbage without end (chunked, no Content-Length). */
  endless?: string[];
  /** Hub paths whose GET connections are dropped before any byte (every time). */
  dropGets?: string[];
}

export interface HubServer {
  url: string;
  requests: string[];
  close(): Promise<void>;
}

/** The file, then 64 KiB blocks of garbage until the client goes away; no Content-Length, so chunked. */
function endless(res: ServerResponse, file: Buffer): void {
  res.writeHead(200, { 'transfer-encoding': 'chunked', 'x-repo-commit': 'c0ffee0000000000000000000000000000000000' });
  res.write(file);
  const junk = Buffer.alloc(65536, 0x5a);
  const pump = (): void => {
    while (!res.destroyed && res.write(junk));
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
}

export async function startHubServer(opts: HubServerOptions): Promise<HubServer> {
  const sockets = new Set<import('node:net').Socket>();
  const commit = opts.commit ?? 'c0ffee0000000000000000000000000000000000';
  const requests: string[] = [];
  const cut = new Set(opts.cutOnce ?? []);
  const byCdn = new Map<string, { file: string; hubPath: string }>();

  const resolve = (urlPath: string): { file: string; hubPath: string } | undefined => {
    const m = /^\/(datasets\/)?([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(urlPath);
    if (!m) return undefined;
    const repoType = m[1] ? 'dataset' : 'model';
    const repo = opts.repos.find((r) => r.repoType === repoType && r.repo === m[2]);
    if (!repo) return undefined;
    const hubPath = decodeURIComponent(m[4] as string);
    const file = join(repo.dir, repo.files?.[hubPath] ?? hubPath);
    try {
      if (!statSync(file).isFile()) return undefined;
    } catch {
      return undefined;
    }
    return { file, hubPath };
  };

  const knownRepo = (urlPath: string): boolean => {
    const m = /^\/(datasets\/)?([^/]+\/[^/]+)\/resolve\//.exec(urlPath);
    return !!m && opts.repos.some((r) => r.repoType === (m[1] ? 'dataset' : 'model') && r.repo === m[2]);
  };

  const body = (file: string, hubPath: string): Buffer => {
    const data = readFileSync(file);
    if (opts.corrupt?.includes(hubPath)) data[data.length >> 1] = (data[data.length >> 1] as number) ^ 0xff;
    return data;
  };

  const sendFile = (req: IncomingMessage, res: ServerResponse, file: string, hubPath: string, etag: string): void => {
    const data = body(file, hubPath);
    if (req.method === 'GET' && opts.dropGets?.includes(hubPath)) {
      res.socket?.destroy();
      return;
    }
    if (req.method === 'GET' && opts.endless?.includes(hubPath)) {
      endless(res, data);
      return;
    }
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = range ? Number(range[1]) : 0;
    const head = { etag: `"${etag}"`, 'x-repo-commit': commit, 'accept-ranges': 'bytes' };
    if (start > 0) {
      res.writeHead(206, {
        ...head,
        'content-length': data.length - start,
        'content-range': `bytes ${start}-${data.length - 1}/${data.length}`,
      });
    } else res.writeHead(200, { ...head, 'content-length': data.length });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const slice = data.subarray(start);
    const slow = opts.slowMs?.[hubPath];
    if (req.method === 'GET' && slow !== undefined) {
      // twenty pieces, evenly spaced over `slow` ms
      const piece = Math.ceil(slice.length / 20);
      let at = 0;
      const timer = setInterval(() => {
        if (res.destroyed) return void clearInterval(timer);
        res.write(slice.subarray(at, at + piece));
        at += piece;
        if (at >= slice.length) {
          clearInterval(timer);
          res.end();
        }
      }, slow / 20);
      return;
    }
    if (req.method === 'GET' && cut.has(hubPath) && start === 0) {
      cut.delete(hubPath);
      res.write(slice.subarray(0, slice.length >> 1), () => res.destroy());
      return;
    }
    res.end(slice);
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(`${req.method} ${url.pathname}`);
    const wanted = opts.token
      ? `Bearer ${opts.token}`
      : opts.basic
        ? `Basic ${Buffer.from(opts.basic).toString('base64')}`
        : undefined;
    if (wanted && req.headers.authorization !== wanted && !url.pathname.startsWith('/cdn/')) {
      res.writeHead(401).end();
      return;
    }
    if (url.pathname.startsWith('/cdn/')) {
      const entry = byCdn.get(url.pathname.slice(5));
      if (!entry) return void res.writeHead(404).end();
      sendFile(req, res, entry.file, entry.hubPath, url.pathname.slice(5));
      return;
    }
    const found = resolve(url.pathname);
    // the hub names the commit it looked in when the repository exists but the file does not
    if (!found) return void res.writeHead(404, knownRepo(url.pathname) ? { 'x-repo-commit': commit } : {}).end();
    const data = readFileSync(found.file);
    const lfs = found.file.endsWith('.onnx') || data.length > 1 << 20;
    if (lfs) {
      const sha = createHash('sha256').update(data).digest('hex');
      byCdn.set(sha, found);
      res.writeHead(302, {
        location: `/cdn/${sha}`,
        'x-linked-etag': `"${sha}"`,
        'x-linked-size': String(data.length),
        etag: `"${sha}"`,
        'x-repo-commit': commit,
      });
      res.end();
      return;
    }
    const gitSha = createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
    sendFile(req, res, found.file, found.hubPath, gitSha);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  server.on('connection', (s) => sockets.add(s.on('close', () => sockets.delete(s))));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy(); // an endless stream would hold close() forever
        server.close(() => r());
      }),
  };
}

import { createHash, type Hash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { RetrieverError } from '../errors.js';
import { hashFile } from '../util/hash-file.js';
import type { Logger } from '../util/log.js';
import { createProgress, formatBytes } from '../util/progress.js';

/**
 * Downloads files from the Hugging Face Hub (or a mirror: HF_ENDPOINT) into
 * the standard hub cache layout, so caches are shared with Python tooling:
 *   <cache>/models--ORG--NAME/blobs/<etag>
 *   <cache>/models--ORG--NAME/snapshots/<commit>/<path> → ../../blobs/<etag>
 *   <cache>/models--ORG--NAME/refs/<revision>             (commit hash)
 * Downloads resume from a partial `.incomplete` blob (HTTP Range), and are
 * verified against the hub's ETag: sha256 for LFS files, the git blob sha1
 * otherwise.
 */
export interface HubConfig {
  endpoint: string;
  token?: string;
  cacheDir: string;
  /** Never touch the network; fail with the list of files needed. */
  offline: boolean;
  log: Logger;
  progress: boolean;
  /** Per-attempt inactivity timeout, ms. */
  timeoutMs?: number;
}

export interface HubFile {
  repoType: 'model' | 'dataset';
  repo: string;
  revision: string;
  path: string;
}

export function hubUrl(endpoint: string, f: HubFile): string {
  const prefix = f.repoType === 'dataset' ? 'datasets/' : '';
  const path = f.path.split('/').map(encodeURIComponent).join('/');
  return `${endpoint}/${prefix}${f.repo}/resolve/${encodeURIComponent(f.revision)}/${path}`;
}

export function repoCacheDir(cacheDir: string, f: Pick<HubFile, 'repoType' | 'repo'>): string {
  return join(cacheDir, `${f.repoType}s--${f.repo.replace(/\//g, '--')}`);
}

/** The cached file for `f`, if a previous download (ours or huggingface_hub's) left it. */
export function cachedPath(cacheDir: string, f: HubFile): string | undefined {
  const repoDir = repoCacheDir(cacheDir, f);
  const candidates = [f.revision];
  const ref = join(repoDir, 'refs', f.revision);
  if (existsSync(ref)) candidates.unshift(readFileSync(ref, 'utf8').trim());
  for (const c of candidates) {
    const p = join(repoDir, 'snapshots', c, f.path);
    if (existsSync(p)) return p;
  }
  return undefined;
}

interface RemoteInfo {
  etag: string;
  commit: string;
  size: number | undefined;
  downloadUrl: string;
}

const MAX_ATTEMPTS = 4;

/** Returns the local path of `f`, downloading it unless it is cached and current. */
export async function fetchHubFile(cfg: HubConfig, f: HubFile): Promise<string> {
  validateRepo(f);
  const cached = cachedPath(cfg.cacheDir, f);
  if (cfg.offline) {
    if (cached) return cached;
    throw new RetrieverError(
      'DOWNLOAD',
      `offline and ${f.repo}/${f.path} is not in the cache ${repoCacheDir(cfg.cacheDir, f)}: download it first, or pass local files`,
    );
  }
  let info: RemoteInfo;
  try {
    info = await headFile(cfg, f);
  } catch (err) {
    if (cached && err instanceof RetrieverError && err.message.includes('network')) {
      cfg.log.warn(`cannot reach ${cfg.endpoint} (${err.message}); using the cached ${f.repo}/${f.path}`);
      return cached;
    }
    throw err;
  }
  const repoDir = repoCacheDir(cfg.cacheDir, f);
  const blob = join(repoDir, 'blobs', info.etag);
  const snapshot = join(repoDir, 'snapshots', info.commit, f.path);
  if (!existsSync(blob)) await downloadBlob(cfg, f, info, blob);
  linkSnapshot(blob, snapshot);
  mkdirSync(join(repoDir, 'refs'), { recursive: true });
  if (f.revision !== info.commit) writeFileSync(join(repoDir, 'refs', f.revision), info.commit);
  return snapshot;
}

function validateRepo(f: HubFile): void {
  const ok = /^[\w.-]+(\/[\w.-]+)?$/.test(f.repo) && !f.repo.includes('..');
  if (!ok || f.path.split('/').some((p) => p === '..' || p === '')) {
    throw new RetrieverError('BAD_INPUT', `invalid hub reference ${f.repo}/${f.path}`);
  }
}

async function headFile(cfg: HubConfig, f: HubFile): Promise<RemoteInfo> {
  const url = hubUrl(cfg.endpoint, f);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'HEAD',
      redirect: 'manual',
      headers: authHeaders(cfg),
      signal: AbortSignal.timeout(cfg.timeoutMs ?? 30_000),
    });
  } catch (err) {
    throw new RetrieverError(
      'DOWNLOAD',
      `network error reaching ${url}: ${(err as Error).message} (set HF_ENDPOINT for a mirror)`,
      {
        cause: err,
      },
    );
  }
  if (res.status === 401 || res.status === 403) {
    throw new RetrieverError(
      'DOWNLOAD',
      `${url} answered ${res.status}: the repository is gated or private; set HF_TOKEN to a token with access`,
    );
  }
  if (res.status === 404)
    throw new RetrieverError('DOWNLOAD', `${url} not found (404): check the repository id, revision and file name`);
  if (res.status >= 400) throw new RetrieverError('DOWNLOAD', `${url} answered HTTP ${res.status}`);
  const h = res.headers;
  const etag = cleanEtag(h.get('x-linked-etag') ?? h.get('etag'));
  if (!etag) throw new RetrieverError('DOWNLOAD', `${url} sent no ETag; is HF_ENDPOINT a Hugging Face mirror?`);
  const size = Number(h.get('x-linked-size') ?? (res.status < 300 ? h.get('content-length') : undefined));
  const location = res.status >= 300 && res.status < 400 ? h.get('location') : null;
  return {
    etag,
    commit: h.get('x-repo-commit') ?? f.revision,
    size: Number.isFinite(size) && size >= 0 ? size : undefined,
    downloadUrl: location ? new URL(location, url).toString() : url,
  };
}

function cleanEtag(raw: string | null): string | undefined {
  if (!raw) return undefined;
  const e = raw.replace(/^W\//, '').replace(/"/g, '').trim();
  return /^[\w.-]+$/.test(e) ? e : undefined;
}

function authHeaders(cfg: HubConfig): Record<string, string> {
  return cfg.token ? { authorization: `Bearer ${cfg.token}` } : {};
}

async function downloadBlob(cfg: HubConfig, f: HubFile, info: RemoteInfo, blob: string): Promise<void> {
  mkdirSync(dirname(blob), { recursive: true });
  const part = `${blob}.incomplete`;
  let lastErr: Error | undefined;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    try {
      await downloadOnce(cfg, f, info, part);
      verify(part, info, f);
      renameSync(part, blob);
      return;
    } catch (err) {
      lastErr = err as Error;
      if (err instanceof RetrieverError && err.message.includes('checksum')) {
        rmSync(part, { force: true });
        throw err;
      }
      if (attempt < MAX_ATTEMPTS) {
        cfg.log.warn(
          `download of ${f.repo}/${f.path} interrupted (${lastErr.message}); resuming (attempt ${attempt + 1}/${MAX_ATTEMPTS})`,
        );
        await new Promise((r) => setTimeout(r, 250 * 2 ** attempt));
      }
    }
  }
  throw new RetrieverError('DOWNLOAD', `cannot download ${f.repo}/${f.path}: ${lastErr?.message}; rerun to resume`, {
    cause: lastErr,
  });
}

async function downloadOnce(cfg: HubConfig, f: HubFile, info: RemoteInfo, part: string): Promise<void> {
  const have = existsSync(part) ? statSync(part).size : 0;
  if (info.size !== undefined && have === info.size) return;
  const headers: Record<string, string> = { ...authHeaders(cfg) };
  if (have > 0) headers['range'] = `bytes=${have}-`;
  const ctrl = new AbortController();
  let idle = setTimeout(() => ctrl.abort(), cfg.timeoutMs ?? 60_000);
  const res = await fetch(info.downloadUrl, { headers, signal: ctrl.signal, redirect: 'follow' });
  if (res.status !== 200 && res.status !== 206) {
    clearTimeout(idle);
    throw new Error(`HTTP ${res.status}`);
  }
  // a server that ignores Range sends the whole file again: start over
  const offset = res.status === 206 ? have : 0;
  const fd = openSync(part, offset > 0 ? 'a' : 'w');
  const progress = createProgress({
    label: `download ${f.path}`,
    total: info.size,
    unit: 'MB',
    scale: 1e6,
    enabled: cfg.progress && (info.size ?? 0) > 1 << 20,
  });
  let done = offset;
  try {
    if (!res.body) throw new Error('empty response body');
    for await (const chunk of res.body) {
      clearTimeout(idle);
      idle = setTimeout(() => ctrl.abort(), cfg.timeoutMs ?? 60_000);
      let off = 0;
      while (off < chunk.length) off += writeSync(fd, chunk, off, chunk.length - off);
      done += chunk.length;
      progress.update(done);
    }
  } finally {
    clearTimeout(idle);
    closeSync(fd);
  }
  progress.finish(formatBytes(done));
  if (info.size !== undefined && done !== info.size) throw new Error(`got ${done} of ${info.size} bytes`);
}

/** Checks the file against the ETag: sha256 (LFS) or git blob sha1 (regular files). */
function verify(path: string, info: RemoteInfo, f: HubFile): void {
  const size = statSync(path).size;
  let hash: Hash;
  if (/^[0-9a-f]{64}$/.test(info.etag)) hash = createHash('sha256');
  else if (/^[0-9a-f]{40}$/.test(info.etag)) {
    hash = createHash('sha1');
    hash.update(`blob ${size}\0`);
  } else return; // an opaque ETag (some mirrors): the size check above is all we can do
  const digest = hashFile(path, hash);
  if (digest !== info.etag) {
    throw new RetrieverError(
      'DOWNLOAD',
      `checksum mismatch for ${f.repo}/${f.path}: expected ${info.etag}, got ${digest}; the partial file was removed, rerun to download again`,
    );
  }
}

function linkSnapshot(blob: string, snapshot: string): void {
  mkdirSync(dirname(snapshot), { recursive: true });
  rmSync(snapshot, { force: true });
  try {
    symlinkSync(relative(dirname(snapshot), blob), snapshot);
  } catch {
    // file systems without symlinks: keep a copy instead
    writeFileSync(snapshot, readFileSync(blob));
  }
}

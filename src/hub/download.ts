import { createHash, type Hash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statfsSync,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { RetrieverError } from '../errors.js';
import { hashFile } from '../util/hash-file.js';
import type { Logger } from '../util/log.js';
import { lockHolder, tryLock } from '../util/pid-lock.js';
import { sleep } from '../util/sleep.js';
import { createProgress, formatBytes } from '../util/progress.js';
import { cachedPath, knownAbsent, linkSnapshot, recordAbsent, recordRef, repoCacheDir, type HubFile } from './cache.js';

export { cachedPath, repoCacheDir, type HubFile } from './cache.js';

/**
 * Downloads files from the Hugging Face Hub (or a mirror: HF_ENDPOINT) into
 * the standard hub cache layout (cache.ts), so caches are shared with Python
 * tooling. Downloads resume from a partial `.incomplete` blob (HTTP Range),
 * are verified against the hub's ETag (sha256 for LFS files, the git blob
 * sha1 otherwise), stop at the size the hub announced, and take a lock per
 * blob, so two processes sharing one cache never write the same file.
 */
export interface HubConfig {
  endpoint: string;
  token?: string;
  cacheDir: string;
  /** Never touch the network (--offline, HF_HUB_OFFLINE=1); fail with the list of files needed. */
  offline: boolean;
  log: Logger;
  progress: boolean;
  /** Per-attempt inactivity timeout, ms. */
  timeoutMs?: number;
  /** Stops a download at once (a stopped first run); the partial blob is kept for the next run. */
  signal?: AbortSignal;
}

export function hubUrl(endpoint: string, f: HubFile): string {
  const prefix = f.repoType === 'dataset' ? 'datasets/' : '';
  const path = f.path.split('/').map(encodeURIComponent).join('/');
  return `${endpointBase(endpoint).base}/${prefix}${f.repo}/resolve/${encodeURIComponent(f.revision)}/${path}`;
}

/**
 * An endpoint without the user info a mirror's URL may carry
 * (`http://user:pw@mirror/`), and that user info as HTTP Basic credentials:
 * fetch refuses a URL holding credentials, which read as a network error.
 */
function endpointBase(endpoint: string): { base: string; origin?: string; basic?: string } {
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch {
    return { base: endpoint };
  }
  if (u.username === '' && u.password === '') return { base: endpoint };
  const basic = Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
  u.username = '';
  u.password = '';
  return { base: u.toString().replace(/\/$/, ''), origin: u.origin, basic };
}

interface RemoteInfo {
  etag: string;
  commit: string;
  size: number | undefined;
  downloadUrl: string;
}

const MAX_ATTEMPTS = 4;
/** Free space a download leaves on the cache's disk, beyond the file itself. */
const SPARE_BYTES = 256 * 2 ** 20;
/** How often a download of unknown size re-checks the free space, bytes. */
const SPACE_CHECK_EVERY = 64 * 2 ** 20;

/** Returns the local path of `f`, downloading it unless it is cached and current. */
export async function fetchHubFile(cfg: HubConfig, f: HubFile): Promise<string> {
  validateRepo(f);
  const cached = cachedPath(cfg.cacheDir, f);
  if (cfg.offline) {
    if (cached) return cached;
    throw new RetrieverError(
      'DOWNLOAD',
      `offline and ${f.repo}/${f.path} is not in the cache ${repoCacheDir(cfg.cacheDir, f)}: run once online to download it, or pass local files`,
    );
  }
  let info: RemoteInfo;
  try {
    info = await headFile(cfg, f);
  } catch (err) {
    if (cached && err instanceof HubUnreachable) {
      cfg.log.warn(`cannot reach ${cfg.endpoint} (${(err as Error).message}); using the cached ${f.repo}/${f.path}`);
      return cached;
    }
    if (err instanceof HubUnreachable) {
      // an MCP host that starts the server without HF_HOME looks in another cache than the user's shell
      throw new HubUnreachable(
        'DOWNLOAD',
        `${(err as Error).message}; the cache looked in, ${repoCacheDir(cfg.cacheDir, f)}, does not hold ${f.path} ` +
          '(an MCP host may start the server without your HF_HOME: pass it in the host\'s "env")',
        { cause: err },
      );
    }
    throw err;
  }
  const repoDir = repoCacheDir(cfg.cacheDir, f);
  const blob = join(repoDir, 'blobs', info.etag);
  const snapshot = join(repoDir, 'snapshots', info.commit, f.path);
  if (!existsSync(blob)) await downloadLocked(cfg, f, info, blob);
  linkSnapshot(blob, snapshot);
  recordRef(repoDir, f.revision, info.commit);
  return snapshot;
}

/**
 * Several files of one repository (a model's), in order: the hub asked once
 * per file while it answers; once it cannot be reached and a file is cached,
 * the rest come from the cache without asking, under one warning. A restart
 * without network printed a warning per file (seven for a model), each after
 * its own failed request.
 */
export async function fetchRepoFiles(
  cfg: HubConfig,
  required: HubFile[],
  optional: HubFile[] = [],
  /** Called with each required file once it is in place, before the next is fetched; it may throw to stop. */
  onFile?: (f: HubFile, path: string) => void,
): Promise<{ required: string[]; optional: Array<string | undefined> }> {
  let unreachable: string | undefined;
  // a request decides whether the hub answers; its warning is held back and said once, for all
  const quiet: HubConfig = { ...cfg, log: { ...cfg.log, warn: (m: string) => (unreachable ??= m) } };
  const fromCache: HubConfig = { ...quiet, offline: true };
  const one = async <T>(get: (h: HubConfig) => Promise<T>): Promise<T> => {
    if (unreachable === undefined) return get(quiet);
    // a file the cache lacks is asked for after all: its own error says what went wrong
    return get(fromCache).catch(() => get(quiet));
  };
  const req: string[] = [];
  for (const f of required) {
    req.push(await one((h) => fetchHubFile(h, f)));
    onFile?.(f, req.at(-1) as string);
  }
  const opt: Array<string | undefined> = [];
  for (const f of optional) opt.push(await one((h) => fetchOptionalHubFile(h, f)));
  if (unreachable !== undefined) {
    const repo = required[0] ?? optional[0];
    const where = repo ? repoCacheDir(cfg.cacheDir, repo) : cfg.cacheDir;
    cfg.log.warn(`cannot reach ${cfg.endpoint}: using the files cached in ${where} (pass --offline to skip the hub)`);
  }
  return { required: req, optional: opt };
}

/**
 * A file a model may or may not ship (the sentence-transformers files): its
 * path, or undefined when the hub says 404, when an earlier 404 was recorded
 * (`.no_exist`, as huggingface_hub keeps it), or when offline and not cached.
 */
export async function fetchOptionalHubFile(cfg: HubConfig, f: HubFile): Promise<string | undefined> {
  const cached = cachedPath(cfg.cacheDir, f);
  if (cached) {
    if (cfg.offline) return cached;
  } else if (cfg.offline || knownAbsent(cfg.cacheDir, f)) return undefined;
  try {
    return await fetchHubFile(cfg, f);
  } catch (err) {
    if (err instanceof HubNotFound) return undefined;
    if (err instanceof HubUnreachable) {
      cfg.log.warn(`cannot reach ${cfg.endpoint}; going on without ${f.repo}/${f.path} (${(err as Error).message})`);
      return undefined;
    }
    throw err;
  }
}

/** The hub answered 404 for a file. */
class HubNotFound extends RetrieverError {}

/** A failure to reach the endpoint at all (as opposed to an answer the hub gave). */
class HubUnreachable extends RetrieverError {}

function validateRepo(f: HubFile): void {
  const ok = /^[\w.-]+(\/[\w.-]+)?$/.test(f.repo) && !f.repo.includes('..');
  if (!ok || f.path.split('/').some((p) => p === '..' || p === '')) {
    throw new RetrieverError('BAD_INPUT', `invalid hub reference ${f.repo}/${f.path}`);
  }
}

function withSignal(cfg: HubConfig, timeoutMs: number): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return cfg.signal ? AbortSignal.any([cfg.signal, timeout]) : timeout;
}

async function headFile(cfg: HubConfig, f: HubFile): Promise<RemoteInfo> {
  const url = hubUrl(cfg.endpoint, f);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'HEAD',
      redirect: 'manual',
      headers: authHeaders(cfg, url),
      signal: withSignal(cfg, cfg.timeoutMs ?? 30_000),
    });
  } catch (err) {
    cfg.signal?.throwIfAborted();
    throw new HubUnreachable(
      'DOWNLOAD',
      `network error reaching ${url}: ${(err as Error).message} (set HF_ENDPOINT for a mirror; on a machine without network, ` +
        'pass --offline or set HF_HUB_OFFLINE=1 to use only the files already in the cache)',
      { cause: err },
    );
  }
  if (res.status === 401 || res.status === 403) {
    throw new RetrieverError(
      'DOWNLOAD',
      `${url} answered ${res.status}: the repository is gated or private; set HF_TOKEN to a token with access`,
    );
  }
  const h = res.headers;
  if (res.status === 404) {
    // the hub names the commit it looked in when the repository exists but the file does not
    const commit = h.get('x-repo-commit');
    if (commit && /^[0-9a-f]{40}$/.test(commit)) recordAbsent(cfg.cacheDir, f, commit);
    throw new HubNotFound('DOWNLOAD', `${url} not found (404): check the repository id, revision and file name`);
  }
  if (res.status >= 400) throw new RetrieverError('DOWNLOAD', `${url} answered HTTP ${res.status}`);
  const etag = cleanEtag(h.get('x-linked-etag') ?? h.get('etag'));
  if (!etag) throw new RetrieverError('DOWNLOAD', `${url} sent no ETag; is HF_ENDPOINT a Hugging Face mirror?`);
  const size = Number(h.get('x-linked-size') ?? (res.status < 300 ? h.get('content-length') : undefined));
  const location = res.status >= 300 && res.status < 400 ? h.get('location') : null;
  const commit = h.get('x-repo-commit') ?? f.revision;
  if (!/^[\w.-]+$/.test(commit)) throw new RetrieverError('DOWNLOAD', `${url} sent an unusable X-Repo-Commit`);
  return {
    etag,
    commit,
    size: Number.isFinite(size) && size >= 0 ? size : undefined,
    downloadUrl: location ? new URL(location, url).toString() : url,
  };
}

function cleanEtag(raw: string | null): string | undefined {
  if (!raw) return undefined;
  const e = raw.replace(/^W\//, '').replace(/"/g, '').trim();
  return /^[\w.-]+$/.test(e) ? e : undefined;
}

/** HF_TOKEN as a bearer token; else the endpoint's own user info, sent only to the endpoint's origin. */
function authHeaders(cfg: HubConfig, url: string): Record<string, string> {
  if (cfg.token) return { authorization: `Bearer ${cfg.token}` };
  const { origin, basic } = endpointBase(cfg.endpoint);
  return basic && new URL(url).origin === origin ? { authorization: `Basic ${basic}` } : {};
}

/**
 * One process downloads a blob at a time (`<blob>.lock`): another one that
 * needs it waits for the lock, then finds the blob there (or, if the holder
 * failed, takes the lock and resumes its partial file).
 */
async function downloadLocked(cfg: HubConfig, f: HubFile, info: RemoteInfo, blob: string): Promise<void> {
  mkdirSync(dirname(blob), { recursive: true });
  const lockPath = `${blob}.lock`;
  let told = false;
  for (;;) {
    const got = tryLock(lockPath);
    if ('release' in got) {
      try {
        if (!existsSync(blob)) await downloadBlob(cfg, f, info, blob);
      } finally {
        got.release();
      }
      return;
    }
    if (!told) {
      cfg.log.info(`waiting for pid ${got.holder.pid}, which is downloading ${f.repo}/${f.path} into the same cache`);
      told = true;
    }
    while (lockHolder(lockPath) && !existsSync(blob)) await sleep(250, cfg.signal);
    if (existsSync(blob)) return;
  }
}

async function downloadBlob(cfg: HubConfig, f: HubFile, info: RemoteInfo, blob: string): Promise<void> {
  const part = `${blob}.incomplete`;
  let lastErr: Error | undefined;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    try {
      await downloadOnce(cfg, f, info, part);
      verify(part, info, f);
      renameSync(part, blob);
      return;
    } catch (err) {
      cfg.signal?.throwIfAborted();
      lastErr = err as Error;
      if (err instanceof RetrieverError) {
        // a checksum mismatch or a full disk: retrying cannot help
        if (err.message.includes('checksum')) rmSync(part, { force: true });
        throw err;
      }
      if (attempt < MAX_ATTEMPTS) {
        cfg.log.warn(
          `download of ${f.repo}/${f.path} interrupted (${lastErr.message}); resuming (attempt ${attempt + 1}/${MAX_ATTEMPTS})`,
        );
        await sleep(250 * 2 ** attempt, cfg.signal);
      }
    }
  }
  throw new RetrieverError('DOWNLOAD', `cannot download ${f.repo}/${f.path}: ${lastErr?.message}; rerun to resume`, {
    cause: lastErr,
  });
}

async function downloadOnce(cfg: HubConfig, f: HubFile, info: RemoteInfo, part: string): Promise<void> {
  const have = existsSync(part) ? statSync(part).size : 0;
  if (info.size !== undefined && have >= info.size) {
    if (have > info.size)
      rmSync(part); // longer than the file: start over
    else return;
  }
  if (info.size !== undefined) checkSpace(part, info.size - have, f);
  const headers: Record<string, string> = { ...authHeaders(cfg, info.downloadUrl) };
  if (have > 0) headers['range'] = `bytes=${have}-`;
  const ctrl = new AbortController();
  const idleMs = cfg.timeoutMs ?? 60_000;
  let idle = setTimeout(() => ctrl.abort(new Error(`no data for ${idleMs / 1000} s`)), idleMs);
  const signal = cfg.signal ? AbortSignal.any([cfg.signal, ctrl.signal]) : ctrl.signal;
  let res: Response;
  try {
    res = await fetch(info.downloadUrl, { headers, signal, redirect: 'follow' });
  } catch (err) {
    clearTimeout(idle); // a rejected fetch must not keep the process alive for the idle timeout
    throw err;
  }
  if (res.status !== 200 && res.status !== 206) {
    clearTimeout(idle);
    await res.body?.cancel();
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
  let checkedAt = offset;
  try {
    if (!res.body) throw new Error('empty response body');
    for await (const chunk of res.body) {
      clearTimeout(idle);
      idle = setTimeout(() => ctrl.abort(new Error(`no data for ${idleMs / 1000} s`)), idleMs);
      // never past the announced size: a stream without end would otherwise fill the disk
      const room = info.size !== undefined ? info.size - done : chunk.length;
      const take = Math.min(chunk.length, room);
      let off = 0;
      while (off < take) off += writeSync(fd, chunk, off, take - off);
      done += take;
      progress.update(done);
      if (take < chunk.length) {
        cfg.log.warn(
          `${info.downloadUrl} sent more than the ${formatBytes(info.size ?? 0)} it announced; stopped there`,
        );
        ctrl.abort(new Error('past the announced size'));
        break;
      }
      if (info.size === undefined && done - checkedAt >= SPACE_CHECK_EVERY) {
        checkSpace(part, 0, f);
        checkedAt = done;
      }
    }
    progress.finish(formatBytes(done));
  } finally {
    clearTimeout(idle);
    closeSync(fd);
    progress.close();
  }
  if (info.size !== undefined && done !== info.size) throw new Error(`got ${done} of ${info.size} bytes`);
}

/** Refuses to start (or go on with) a download that would leave the cache's disk nearly full. */
function checkSpace(part: string, bytes: number, f: HubFile): void {
  let free: number;
  try {
    const s = statfsSync(dirname(part));
    free = s.bavail * s.bsize;
  } catch {
    return; // a file system that cannot say: the write itself will fail if it must
  }
  if (free < bytes + SPARE_BYTES) {
    throw new RetrieverError(
      'DOWNLOAD',
      `not enough disk space for ${f.repo}/${f.path}: it needs ${formatBytes(bytes)} and ${dirname(part)} has ${formatBytes(free)} free ` +
        `(keeping ${formatBytes(SPARE_BYTES)} spare); free some space or point HF_HUB_CACHE (or --cache-dir) at a larger disk`,
    );
  }
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

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { RetrieverError } from '../errors.js';
import { lockHolder, tryLock, type PidLock } from '../util/pid-lock.js';

export type BuildLock = PidLock;

/**
 * One build of an index name at a time. Two builds of the same name shared
 * `.NAME.partial` and could publish each other's half-written files (the
 * outside probe saw a good index replaced by one failing its own checksum).
 * The lock is `.NAME.lock` beside the partial directory, held for the whole
 * build (util/pid-lock.ts): a second build is refused at once, naming the
 * first one's PID.
 */
export function lockBuild(indexDir: string, name: string): BuildLock {
  mkdirSync(indexDir, { recursive: true });
  const path = buildLockPath(indexDir, name);
  const got = tryLock(path);
  if ('release' in got) return got;
  const h = got.holder;
  throw new RetrieverError(
    'LOCKED',
    `another build of ${name} is running (pid ${h.pid} on ${h.host}, started ${h.started}): ` +
      `wait for it to finish or stop it; if no such build runs, remove ${path}`,
  );
}

/** The live build holding NAME's lock, if any (a first run waits for it instead of failing). */
export function buildLockHolder(indexDir: string, name: string): { pid: number; started: string } | undefined {
  return lockHolder(buildLockPath(indexDir, name));
}

function buildLockPath(indexDir: string, name: string): string {
  return join(indexDir, `.${name}.lock`);
}

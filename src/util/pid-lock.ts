import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { writeFileExclusive } from './fs-durable.js';
import { bootId, processStartTicks } from './process-identity.js';

interface LockInfo {
  pid: number;
  host: string;
  started: string;
  /** The kernel's boot id and the holder's start time (process-identity.ts), where /proc has them. */
  boot?: string;
  start?: string;
  /** This process's own mark: a lock with our PID but another nonce was left by a predecessor. */
  nonce?: string;
}

/** Set once per process: tells this process's locks from those of an earlier process with its PID. */
const NONCE = randomBytes(8).toString('hex');

export interface PidLock {
  readonly path: string;
  release(): void;
}

/** Who holds a lock: where and since when, for messages. */
export interface LockHolder {
  pid: number;
  host: string;
  started: string;
}

/**
 * Takes the lock file `path`, or returns its live holder. The lock is
 * created atomically with its contents (see tryCreate) and records the
 * holder's PID, host, boot id, start time and a per-process nonce; a lock
 * left by a process that no longer runs on this host (killed with -9) is
 * taken over, also when a new process got the dead one's PID (holderRuns).
 */
export function tryLock(path: string): PidLock | { holder: LockHolder } {
  const info: LockInfo = {
    pid: process.pid,
    host: hostname(),
    started: new Date().toISOString(),
    nonce: NONCE,
    ...optional('boot', bootId()),
    ...optional('start', processStartTicks(process.pid)),
  };
  for (let attempt = 0; attempt < 2; attempt++) {
    if (tryCreate(path, info)) {
      let released = false;
      return {
        path,
        release: () => {
          if (released) return;
          released = true;
          const held = readLock(path);
          if (held?.pid === process.pid && held.nonce === NONCE) rmSync(path, { force: true });
        },
      };
    }
    const holder = readLock(path);
    if (holder && holderRuns(holder)) return { holder };
    // stale (its holder is gone), vanished since, or not a lock record (a lock is created whole, with
    // its PID, so no live holder's lock is unreadable): move it aside and retry once;
    // of two processes taking over at once, one rename fails and that one finds the other's new lock
    try {
      renameSync(path, `${path}.stale-${process.pid}`);
      rmSync(`${path}.stale-${process.pid}`, { force: true });
    } catch {
      // another process took it over first
    }
  }
  const holder = readLock(path);
  return { holder: holder ?? { pid: 0, host: '?', started: '?' } };
}

/** The live holder of the lock at `path`, if any. */
export function lockHolder(path: string): LockHolder | undefined {
  const holder = readLock(path);
  return holder && holderRuns(holder) ? holder : undefined;
}

/**
 * Creates the lock with its contents in one step: the record is written to a
 * file of this process's own, then hard-linked to the lock's name, which
 * fails with EEXIST if the lock is held (link(2) is atomic, as O_EXCL is), so
 * no reader ever sees a lock without its PID.
 */
function tryCreate(path: string, info: LockInfo): boolean {
  const mine = `${path}.${process.pid}`;
  try {
    // created exclusively, never through a symlink planted at this name in a shared --index-dir
    rmSync(mine, { force: true });
    writeFileExclusive(mine, `${JSON.stringify(info)}\n`);
    linkSync(mine, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new Error(`cannot create the lock ${path}: ${(err as Error).message}`, { cause: err });
  } finally {
    rmSync(mine, { force: true });
  }
}

function readLock(path: string): LockInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockInfo>;
    if (typeof info.pid !== 'number') return undefined;
    return {
      pid: info.pid,
      host: String(info.host ?? ''),
      started: String(info.started ?? ''),
      ...optional('boot', typeof info.boot === 'string' ? info.boot : undefined),
      ...optional('start', typeof info.start === 'string' ? info.start : undefined),
      ...optional('nonce', typeof info.nonce === 'string' ? info.nonce : undefined),
    };
  } catch {
    return undefined;
  }
}

/**
 * Whether the lock's holder still runs; a holder on another host (a shared
 * disk) is assumed to. On this host a PID is not enough: after a container
 * restart the server is PID 1 again, as its killed predecessor was, so the
 * boot id and the process's start time must match too.
 */
function holderRuns(info: LockInfo): boolean {
  if (info.host !== hostname()) return true;
  const boot = bootId();
  if (info.boot !== undefined && boot !== undefined && info.boot !== boot) return false;
  if (info.pid === process.pid) return info.nonce === NONCE;
  try {
    process.kill(info.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const start = info.start !== undefined ? processStartTicks(info.pid) : undefined;
  return start === undefined || start === info.start;
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

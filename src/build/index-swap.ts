import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { RetrieverError } from '../errors.js';
import { verifyFiles } from '../index/file-integrity.js';
import type { Manifest } from '../index/manifest.js';
import { fsyncPath, fsyncTree } from '../util/fs-durable.js';

/**
 * Atomic index replacement. `indexes/NAME` is a symlink to a hidden build
 * directory `indexes/.NAME.<build-id>`. A build writes into
 * `indexes/.NAME.partial`, fsyncs it, renames it to its build-id directory and
 * then renames a fresh symlink over `indexes/NAME` — rename(2) is atomic, so a
 * reader sees either the old index or the new one, never a mix, and a crash at
 * any point leaves the previous index intact.
 */
export function partialDir(indexDir: string, name: string): string {
  return join(indexDir, `.${name}.partial`);
}

export function liveDir(indexDir: string, name: string): string {
  return join(indexDir, name);
}

export function newBuildId(): string {
  const ts = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const rand = Math.floor(Math.random() * 0xffffff)
    .toString(16)
    .padStart(6, '0');
  return `${ts}-${rand}`;
}

export function preparePartial(indexDir: string, name: string, resume: boolean): { dir: string; resumed: boolean } {
  mkdirSync(indexDir, { recursive: true });
  const dir = partialDir(indexDir, name);
  const kind = entryKind(dir);
  if (kind === 'other' || (kind === 'dir' && !ownDirectory(dir))) {
    if (resume) {
      throw new RetrieverError(
        'BUILD',
        `${dir} is not a directory this user's build made (a symlink, a file or another user's directory): ` +
          'a build never writes through it; remove it, then build without --resume',
      );
    }
  }
  const resumed = kind === 'dir' && resume;
  // rmSync removes a symlink itself, never what it points to
  if (kind !== 'none' && !resumed) rmSync(dir, { recursive: true, force: true });
  if (!resumed) {
    try {
      mkdirSync(dir, { mode: 0o755 }); // not recursive: fails if anything took the name meanwhile
    } catch (err) {
      throw new RetrieverError('BUILD', `cannot create the build directory ${dir}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  return { dir, resumed };
}

/** A real directory (not a symlink), a symlink or other entry, or nothing. */
function entryKind(path: string): 'none' | 'dir' | 'other' {
  try {
    return lstatSync(path).isDirectory() ? 'dir' : 'other';
  } catch {
    return 'none';
  }
}

function ownDirectory(path: string): boolean {
  const uid = process.getuid?.();
  return uid === undefined || lstatSync(path).uid === uid;
}

/** What a publish kept that it did not make: a hand-made index it did not remove. */
export interface Published {
  dir: string;
  /** The previous live index when it was not a build of ours (a hand-made directory or symlink), left as it was. */
  keptPrevious?: string;
}

/** The hidden directory names a build creates: `.NAME.<build id>`. */
const BUILD_ID_RE = /^\d{8}T\d{6}Z-[0-9a-f]{6}$/;

/**
 * Publishes a finished partial build as the live index. The previous live
 * index is removed only when it is a build of ours (`indexes/NAME` a symlink
 * to `.NAME.<build id>` beside it); a symlink to anywhere else, or a plain
 * directory, may hold what a build never made (an index moved to a bigger
 * disk, with other files beside it), so it is left as it was and reported.
 */
export function commitPartial(indexDir: string, name: string, buildId: string): Published {
  const partial = partialDir(indexDir, name);
  const targetName = `.${name}.${buildId}`;
  const target = join(indexDir, targetName);
  fsyncTree(partial);
  renameSync(partial, target);
  const live = liveDir(indexDir, name);
  const tmpLink = join(indexDir, `.${name}.link-${process.pid}`);
  rmSync(tmpLink, { force: true });
  symlinkSync(targetName, tmpLink);
  let ours: string | undefined;
  let kept: string | undefined;
  const kind = existsSync(live) || isSymlink(live) ? (isSymlink(live) ? 'link' : 'dir') : 'none';
  if (kind === 'link') {
    const to = readlinkSync(live);
    if (ownBuildName(name, to)) ours = join(indexDir, to);
    else kept = resolve(indexDir, to);
  } else if (kind === 'dir') {
    // a plain directory (copied by hand): moved aside, kept
    kept = join(indexDir, `.${name}.replaced-${buildId}`);
    renameSync(live, kept);
  }
  renameSync(tmpLink, live);
  fsyncPath(indexDir);
  if (ours && ours !== target) rmSync(ours, { recursive: true, force: true });
  removeOrphans(indexDir, name, targetName);
  return { dir: target, ...(kept ? { keptPrevious: kept } : {}) };
}

/** Whether a live symlink's target is one of this name's build directories, in the index directory itself. */
function ownBuildName(name: string, linkTarget: string): boolean {
  const prefix = `.${name}.`;
  return linkTarget.startsWith(prefix) && BUILD_ID_RE.test(linkTarget.slice(prefix.length));
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Build directories left behind by a crash between rename and symlink swap. */
function removeOrphans(indexDir: string, name: string, keep: string): void {
  const prefix = `.${name}.`;
  for (const entry of readdirSync(indexDir)) {
    if (!entry.startsWith(prefix) || entry === keep) continue;
    if (BUILD_ID_RE.test(entry.slice(prefix.length))) rmSync(join(indexDir, entry), { recursive: true, force: true });
  }
}

/**
 * The last check before the swap: every file has its recorded size and its
 * first, last and some random 64 MiB blocks their recorded hashes, so a good
 * live index is never replaced by one that would fail its own checksum.
 */
export function verifyBeforePublish(dir: string, manifest: Manifest): void {
  const hint = 'the build was not published (the previous index, if any, still serves): run the build again';
  for (const [name, rec] of Object.entries(manifest.files)) {
    const size = statSync(join(dir, name)).size;
    if (size !== rec.bytes) {
      throw new RetrieverError(
        'BUILD',
        `${join(dir, name)} changed while it was checksummed (${size} bytes, recorded ${rec.bytes}): ${hint}`,
      );
    }
  }
  verifyFiles(dir, manifest.files, 'sample', hint);
}

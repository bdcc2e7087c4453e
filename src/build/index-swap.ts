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
  const exists = existsSync(dir);
  if (exists && !resume) rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return { dir, resumed: exists && resume };
}

/** Publishes a finished partial build as the live index; returns its directory. */
export function commitPartial(indexDir: string, name: string, buildId: string): string {
  const partial = partialDir(indexDir, name);
  const targetName = `.${name}.${buildId}`;
  const target = join(indexDir, targetName);
  fsyncTree(partial);
  renameSync(partial, target);
  const live = liveDir(indexDir, name);
  const tmpLink = join(indexDir, `.${name}.link-${process.pid}`);
  rmSync(tmpLink, { force: true });
  symlinkSync(targetName, tmpLink);
  let previous: string | undefined;
  if (existsSync(live) || isSymlink(live)) {
    if (isSymlink(live)) previous = resolve(indexDir, readlinkSync(live));
    else {
      // a plain directory (copied by hand): move it aside; it is removed below
      previous = join(indexDir, `.${name}.replaced-${buildId}`);
      renameSync(live, previous);
    }
  }
  renameSync(tmpLink, live);
  fsyncPath(indexDir);
  if (previous && resolve(previous) !== resolve(target)) rmSync(previous, { recursive: true, force: true });
  removeOrphans(indexDir, name, targetName);
  return target;
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
  const idRe = /^\d{8}T\d{6}Z-[0-9a-f]{6}$/;
  for (const entry of readdirSync(indexDir)) {
    if (!entry.startsWith(prefix) || entry === keep) continue;
    const rest = entry.slice(prefix.length);
    if (idRe.test(rest)) rmSync(join(indexDir, entry), { recursive: true, force: true });
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

import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { writeFileAtomic } from '../util/fs-durable.js';

/**
 * The Hugging Face hub cache layout, shared with Python tooling
 * (huggingface_hub's `file_download.py`):
 *   <cache>/models--ORG--NAME/blobs/<etag>
 *   <cache>/models--ORG--NAME/snapshots/<commit>/<path> → ../../blobs/<etag>
 *   <cache>/models--ORG--NAME/refs/<revision>             (commit hash)
 *   <cache>/models--ORG--NAME/.no_exist/<commit>/<path>   (the hub said 404)
 */
export interface HubFile {
  repoType: 'model' | 'dataset';
  repo: string;
  revision: string;
  path: string;
}

export function repoCacheDir(cacheDir: string, f: Pick<HubFile, 'repoType' | 'repo'>): string {
  return join(cacheDir, `${f.repoType}s--${f.repo.replace(/\//g, '--')}`);
}

/** The commits a revision may mean here: the one its ref names (if cached), then the revision itself. */
function candidateCommits(repoDir: string, revision: string): string[] {
  const out = [revision];
  const ref = join(repoDir, 'refs', revision);
  if (existsSync(ref)) out.unshift(readFileSync(ref, 'utf8').trim());
  return out;
}

/** The cached file for `f`, if a previous download (ours or huggingface_hub's) left it. */
export function cachedPath(cacheDir: string, f: HubFile): string | undefined {
  const repoDir = repoCacheDir(cacheDir, f);
  for (const c of candidateCommits(repoDir, f.revision)) {
    const p = join(repoDir, 'snapshots', c, f.path);
    if (existsSync(p)) return p;
  }
  return undefined;
}

/** Whether the hub answered 404 for `f` at the commit its revision names, as huggingface_hub records it. */
export function knownAbsent(cacheDir: string, f: HubFile): boolean {
  const repoDir = repoCacheDir(cacheDir, f);
  return candidateCommits(repoDir, f.revision).some((c) => existsSync(join(repoDir, '.no_exist', c, f.path)));
}

/** Remembers a 404 for `f` at `commit`, so an offline restart knows the file does not exist. */
export function recordAbsent(cacheDir: string, f: HubFile, commit: string): void {
  const repoDir = repoCacheDir(cacheDir, f);
  const marker = join(repoDir, '.no_exist', commit, f.path);
  mkdirSync(dirname(marker), { recursive: true });
  if (!existsSync(marker)) writeFileSync(marker, '');
  recordRef(repoDir, f.revision, commit);
}

export function recordRef(repoDir: string, revision: string, commit: string): void {
  if (revision === commit) return;
  mkdirSync(join(repoDir, 'refs'), { recursive: true });
  writeFileAtomic(join(repoDir, 'refs', revision), commit);
}

/**
 * Points `snapshots/<commit>/<path>` at the blob: a symlink made under a name
 * of this process's own and renamed into place, so two processes linking the
 * same file never see each other's half step (a copy where symlinks fail).
 */
export function linkSnapshot(blob: string, snapshot: string): void {
  mkdirSync(dirname(snapshot), { recursive: true });
  const tmp = `${snapshot}.tmp-${process.pid}-${Math.floor(Math.random() * 2 ** 32).toString(16)}`;
  try {
    symlinkSync(relative(dirname(snapshot), blob), tmp);
  } catch {
    writeFileAtomic(snapshot, readFileSync(blob));
    return;
  }
  renameSync(tmp, snapshot);
}

import { lstatSync, readdirSync, type Dirent } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { RetrieverError } from '../../errors.js';
import { globMatcher } from './globs.js';
import { own } from '../../util/own.js';

/** The kinds of file a folder corpus reads, by extension (lower case). */
export const FILE_KINDS = {
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.mdx': 'markdown',
  '.txt': 'text',
  '.text': 'text',
  '.rst': 'text',
  '.html': 'html',
  '.htm': 'html',
  '.xhtml': 'html',
  '.pdf': 'pdf',
} as const;
export type FileKind = (typeof FILE_KINDS)[keyof typeof FILE_KINDS];

/** Folders never entered, whatever the globs say: they hold tooling, not documents. */
const SKIPPED_DIRS = new Set(['node_modules', '__pycache__', 'venv', '.venv', 'site-packages']);

export interface FolderOptions {
  /** Globs over the path relative to the folder (`**`, `*`, `?`, `{a,b}`); a file must match one. Default: every known kind. */
  include?: string[];
  /** Globs a file or folder must not match. */
  exclude?: string[];
  /** Files above this many bytes are listed as skipped, not read. */
  maxFileBytes: number;
}

/** The selection when a caller names none: every known kind, up to 64 MiB a file (a PDF of a few thousand pages). */
export const DEFAULT_FOLDER: FolderOptions = { maxFileBytes: 64 * 2 ** 20 };

export interface FolderEntry {
  /** Path relative to the folder, with `/` separators: the document id. */
  rel: string;
  abs: string;
  kind: FileKind;
  bytes: number;
  mtimeMs: number;
}

export interface Skipped {
  rel: string;
  reason: string;
}

/**
 * Every document file under `root`, in a stable order (code-point order of
 * the relative paths, so two builds of one folder number chunks alike).
 * Hidden entries and tooling folders are not entered; symlinks are not
 * followed (one could lead out of the folder, or round in a loop); files of
 * unknown kinds are passed over in silence, files too large are listed.
 */
export function listFolder(root: string, opts: FolderOptions): { entries: FolderEntry[]; skipped: Skipped[] } {
  const include = opts.include && opts.include.length > 0 ? globMatcher(opts.include) : undefined;
  const exclude = opts.exclude && opts.exclude.length > 0 ? globMatcher(opts.exclude) : undefined;
  const entries: FolderEntry[] = [];
  const skipped: Skipped[] = [];
  const stack: string[] = [root];
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    const subdirs: string[] = [];
    const listing = readDir(dir, root);
    if (listing instanceof Error) {
      skipped.push({
        rel: relative(root, dir).split(sep).join('/') + '/',
        reason: `cannot list it (${listing.message})`,
      });
      continue;
    }
    for (const d of listing) {
      if (d.name.startsWith('.')) continue;
      const abs = join(dir, d.name);
      const rel = relative(root, abs).split(sep).join('/');
      if (exclude?.(rel)) continue;
      if (d.isSymbolicLink()) {
        if (include?.(rel) ?? kindOf(d.name)) skipped.push({ rel, reason: 'a symbolic link (not followed)' });
        continue;
      }
      if (d.isDirectory()) {
        if (!SKIPPED_DIRS.has(d.name)) subdirs.push(abs);
        continue;
      }
      if (!d.isFile()) continue;
      const kind = kindOf(d.name);
      if (include ? !include(rel) : !kind) continue;
      if (!kind) {
        skipped.push({ rel, reason: `not a kind this reader knows (${Object.keys(FILE_KINDS).join(' ')})` });
        continue;
      }
      const st = lstatSync(abs);
      if (st.size > opts.maxFileBytes) {
        skipped.push({ rel, reason: `${st.size} bytes, over the ${opts.maxFileBytes}-byte limit (--max-file-mb)` });
        continue;
      }
      entries.push({ rel, abs, kind, bytes: st.size, mtimeMs: st.mtimeMs });
    }
    // depth first, in reverse so the stack pops folders in name order
    subdirs.sort().reverse();
    stack.push(...subdirs);
  }
  entries.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return { entries, skipped };
}

export function kindOf(name: string): FileKind | undefined {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return undefined;
  return own(FILE_KINDS as Record<string, FileKind>, name.slice(dot).toLowerCase());
}

function readDir(dir: string, root: string): Dirent[] | Error {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if (dir !== root) return err as Error;
    throw new RetrieverError('BAD_INPUT', `cannot read the folder ${root}: ${(err as Error).message}; check --input`, {
      cause: err,
    });
  }
}

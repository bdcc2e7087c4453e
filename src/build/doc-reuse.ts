import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { INDEX_FILES } from '../index/layout.js';
import { readManifest, type Manifest } from '../index/manifest.js';
import { ChunkStore, type StoredDocument } from '../store/chunk-store.js';
import type { Logger } from '../util/log.js';
import { formatCount } from '../util/progress.js';
import { TOOL_VERSION } from '../version.js';
import { listFolder, type FolderOptions } from '../ingest/files/walk.js';

/** What must match for a stored document to stand for its file: the chunker and the reader. */
export interface DocReuseSettings {
  chunker: Manifest['chunker'];
}

/**
 * The documents of the folder index being replaced, by file: a rebuild of a folder takes an
 * unchanged file's document and chunks from the previous store (same size and modification time
 * as when it was read) instead of reading, parsing and chunking the file again. With the vectors
 * taken over the same way (vector-reuse.ts), an update after an edit reads, parses and embeds only
 * what changed; what remains is writing the store and inverting BM25 over every chunk, about a
 * second per 10,000 chunks. Reuse needs the same tool version (the readers' output) and chunker.
 */
export class DocReuse {
  /** Files taken over unchanged; read because they changed; read because the previous build had none of that name. */
  reused = 0;
  changed = 0;
  added = 0;

  private constructor(
    private readonly store: ChunkStore,
    private readonly stamps: Map<string, { bytes: number; mtimeMs: number }>,
  ) {}

  /** The previous build of this folder at `dir`, if its documents can stand in for this build's; else undefined. */
  static open(dir: string, want: DocReuseSettings, log: Logger): DocReuse | undefined {
    if (!existsSync(join(dir, INDEX_FILES.manifest))) return undefined;
    let m: Manifest;
    try {
      m = readManifest(dir, 'every file is read');
    } catch {
      return undefined;
    }
    const same =
      m.corpus.format === 'files' &&
      m.tool_version === TOOL_VERSION &&
      m.chunker.size === want.chunker.size &&
      m.chunker.overlap === want.chunker.overlap &&
      m.chunker.tokenizer === want.chunker.tokenizer;
    if (!same) {
      log.info('the previous index was read or chunked otherwise: every file is read');
      return undefined;
    }
    let store: ChunkStore;
    try {
      store = new ChunkStore(join(dir, INDEX_FILES.store));
    } catch (err) {
      log.warn(`the previous index cannot lend its documents (${(err as Error).message}): every file is read`);
      return undefined;
    }
    const stamps = store.fileStamps();
    if (stamps.size === 0) {
      store.close();
      return undefined;
    }
    log.info(`the previous index lends ${formatCount(stamps.size)} documents: only new or changed files are read`);
    return new DocReuse(store, stamps);
  }

  /** The stored document for a file listed with this size and modification time, if it is unchanged. */
  lookup(docId: string, bytes: number, mtimeMs: number): StoredDocument | undefined {
    const s = this.stamps.get(docId);
    const doc = s && s.bytes === bytes && s.mtimeMs === mtimeMs ? this.store.storedDocument(docId) : undefined;
    if (doc) this.reused++;
    else if (s) this.changed++;
    else this.added++;
    return doc;
  }

  /** What the rebuild did to the folder's documents, for its log: "1,497 unchanged, 2 changed, 1 added, 1 removed". */
  summary(): string {
    const removed = this.stamps.size - this.reused - this.changed;
    return `documents: ${formatCount(this.reused)} unchanged (re-used), ${formatCount(this.changed)} changed, ${formatCount(this.added)} added, ${formatCount(removed)} removed`;
  }

  close(): void {
    this.store.close();
  }
}

/**
 * Whether a folder still holds exactly the files its index at `dir` was built from (same paths,
 * sizes and modification times; the files the build skipped and named count as seen): the check
 * a server makes before its catch-up update. No index, or one that is not a folder's: changed.
 */
export function folderChangedSince(dir: string, root: string, folder: FolderOptions): boolean {
  if (!existsSync(join(dir, INDEX_FILES.manifest))) return true;
  const m = readManifest(dir, 'the folder is read again');
  const skipped = m.corpus.skipped;
  if (m.corpus.format !== 'files' || (skipped && skipped.count > skipped.files.length)) return true;
  const store = new ChunkStore(join(dir, INDEX_FILES.store));
  let stamps: Map<string, { bytes: number; mtimeMs: number }>;
  try {
    stamps = store.fileStamps();
  } finally {
    store.close();
  }
  const named = new Set((skipped?.files ?? []).map((f) => f.path));
  const { entries } = listFolder(root, folder);
  let seen = 0;
  for (const e of entries) {
    const s = stamps.get(e.rel);
    if (s) {
      if (s.bytes !== e.bytes || s.mtimeMs !== Math.floor(e.mtimeMs)) return true;
      seen++;
    } else if (!named.has(e.rel)) return true;
  }
  return seen !== stamps.size;
}

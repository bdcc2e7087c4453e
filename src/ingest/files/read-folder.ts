import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import { TextDecoder } from 'node:util';
import type { Metadata } from '../../store/chunk-store.js';
import type { SourceDocument } from '../types.js';
import { extractHtml } from './html.js';
import { extractMarkdown, type ExtractedText } from './markdown.js';
import { extractPdf, PdfTextError } from './pdf.js';
import { listFolder, type FolderEntry, type FolderOptions, type Skipped } from './walk.js';

export interface FolderReadOptions extends FolderOptions {
  onProgress?: (bytesRead: number) => void;
  /** Receives each file's path, size and bytes: the source fingerprint. */
  hash?: { update(data: Uint8Array): unknown };
  /** A file that was not indexed, with why. */
  onSkipped?: (s: Skipped) => void;
}

/** Documents per batch handed to the ingest loop. */
const BATCH = 64;

/**
 * A folder of Markdown, HTML, PDF and text as documents: the id is the
 * path relative to the folder, the title the document's own (first heading,
 * `<title>`, PDF title) or else the file name, the date the file's
 * modification time, the source the top-level folder (the folder's own name
 * for files at its root). A file that cannot be read is reported through
 * onSkipped and the build goes on.
 */
export async function* readFolderBatches(root: string, opts: FolderReadOptions): AsyncGenerator<SourceDocument[]> {
  const { entries, skipped } = listFolder(root, opts);
  for (const s of skipped) opts.onSkipped?.(s);
  let batch: SourceDocument[] = [];
  let bytesRead = 0;
  for (const e of entries) {
    const doc = await readEntry(root, e, opts);
    bytesRead += e.bytes;
    opts.onProgress?.(bytesRead);
    if (doc) batch.push(doc);
    if (batch.length === BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * The bytes the folder's readable files hold (the progress bar's total), and
 * what identifies its contents without reading them: every file's path, size
 * and modification time. A resumed build compares the stamp.
 */
export function describeFolder(root: string, opts: FolderOptions): { bytes: number; stamp: string } {
  const { entries } = listFolder(root, opts);
  return {
    bytes: entries.reduce((s, e) => s + e.bytes, 0),
    stamp: entries.map((e) => `${e.rel}\t${e.bytes}\t${Math.floor(e.mtimeMs)}`).join('\n'),
  };
}

async function readEntry(root: string, e: FolderEntry, opts: FolderReadOptions): Promise<SourceDocument | undefined> {
  const skip = (reason: string): undefined => {
    opts.onSkipped?.({ rel: e.rel, reason });
    return undefined;
  };
  let bytes: Uint8Array;
  try {
    bytes = await readRegular(e.abs, opts.maxFileBytes);
  } catch (err) {
    return skip(`cannot read it (${(err as Error).message})`);
  }
  opts.hash?.update(Buffer.from(`${e.rel}\0${bytes.length}\0`));
  opts.hash?.update(bytes);
  let x: ExtractedText;
  try {
    x = await extract(e, bytes);
  } catch (err) {
    if (err instanceof PdfTextError || err instanceof NotText) return skip(err.message);
    return skip(`cannot extract its text (${(err as Error).message})`);
  }
  if (x.text.trim() === '') return skip('no text');
  const metadata: Metadata = {
    source: topFolder(root, e.rel),
    published_at: new Date(e.mtimeMs).toISOString(),
    path: e.rel,
    type: e.kind,
  };
  return {
    id: e.rel,
    title: x.title ?? basename(e.rel),
    text: x.text,
    metadata,
    structure: { sections: x.sections, ...(x.pages ? { pages: x.pages } : {}) },
  };
}

async function extract(e: FolderEntry, bytes: Uint8Array): Promise<ExtractedText> {
  if (e.kind === 'pdf') return extractPdf(bytes);
  const text = decodeText(bytes);
  if (e.kind === 'markdown') return extractMarkdown(text);
  if (e.kind === 'html') return extractHtml(text);
  return {
    text: text
      .replace(/^\uFEFF/, '')
      .replace(/\r\n?/g, '\n')
      .trimEnd(),
    sections: [],
  };
}

class NotText extends Error {}

/** UTF-8 (the web's and every editor's default), else Latin-1; NUL bytes mean a binary file under a text name. */
function decodeText(bytes: Uint8Array): string {
  if (bytes.includes(0)) throw new NotText('holds NUL bytes: a binary file under a text file name');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new TextDecoder('latin1').decode(bytes);
  }
}

/** Reads a file that must still be regular and within the limit when opened (it may have changed since listed). */
async function readRegular(path: string, max: number): Promise<Uint8Array> {
  // O_NOFOLLOW: a file swapped for a symlink since it was listed is not followed out of the folder
  const fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new Error('no longer a regular file');
    if (st.size > max) throw new Error(`grew to ${st.size} bytes, over the limit`);
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

function topFolder(root: string, rel: string): string {
  const slash = rel.indexOf('/');
  return slash < 0 ? basename(root) : rel.slice(0, slash);
}

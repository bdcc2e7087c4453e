import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import { TextDecoder } from 'node:util';
import type { Metadata, StoredDocument } from '../../store/chunk-store.js';
import type { SourceDocument } from '../types.js';
import { capTitle } from '../title.js';
import { openedInside, realRoot } from './contained.js';
import { extractHtml, HtmlTooDeep } from './html.js';
import { extractMarkdown, type ExtractedText } from './markdown.js';
import { PdfTextError } from './pdf.js';
import { PdfRunner, type PdfLimits } from './pdf-runner.js';
import { listFolder, type FolderEntry, type FolderOptions, type Skipped } from './walk.js';

export interface FolderReadOptions extends FolderOptions {
  onProgress?: (bytesRead: number) => void;
  /** Receives each file's path, size and bytes: the source fingerprint. */
  hash?: { update(data: Uint8Array): unknown };
  /** A file that was not indexed, with why. */
  onSkipped?: (s: Skipped) => void;
  /** Files of kinds a folder corpus does not read, counted by extension. */
  onPassedOver?: (byExtension: Record<string, number>) => void;
  /** Stops a build between files, and inside a PDF. */
  signal?: AbortSignal;
  /** How long and how much memory a PDF may take (tests lower them). */
  pdfLimits?: PdfLimits;
  /** The previous build's copy of an unchanged file, taken instead of reading it (build/doc-reuse.ts). */
  reuse?: (docId: string, bytes: number, mtimeMs: number) => StoredDocument | undefined;
}

/** Documents per batch handed to the ingest loop. */
const BATCH = 64;

/**
 * A folder of Markdown, HTML, PDF and text as documents: the id is the
 * path relative to the folder, the title the document's own (first heading,
 * `<title>`, PDF title or first page heading, a text file's first line) or
 * else the file name, the date the file's modification time, the source the
 * top-level folder (the folder's own name for files at its root). A file
 * that cannot be read is reported through onSkipped and the build goes on.
 */
export async function* readFolderBatches(root: string, opts: FolderReadOptions): AsyncGenerator<SourceDocument[]> {
  const { entries, skipped, passedOver } = listFolder(root, opts);
  for (const s of skipped) opts.onSkipped?.(s);
  opts.onPassedOver?.(passedOver);
  const inside = realRoot(root);
  const pdfs = new PdfRunner(opts.pdfLimits);
  try {
    let batch: SourceDocument[] = [];
    let bytesRead = 0;
    for (const e of entries) {
      opts.signal?.throwIfAborted();
      const doc = await readEntry(root, inside, e, opts, pdfs);
      bytesRead += e.bytes;
      opts.onProgress?.(bytesRead);
      if (doc) batch.push(doc);
      if (batch.length === BATCH) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  } finally {
    pdfs.close();
  }
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

async function readEntry(
  root: string,
  inside: Buffer,
  e: FolderEntry,
  opts: FolderReadOptions,
  pdfs: PdfRunner,
): Promise<SourceDocument | undefined> {
  const skip = (reason: string): undefined => {
    opts.onSkipped?.({ rel: e.rel, reason });
    return undefined;
  };
  const stamp = { bytes: e.bytes, mtimeMs: Math.floor(e.mtimeMs) };
  const stored = opts.reuse?.(e.rel, stamp.bytes, stamp.mtimeMs);
  if (stored) {
    // unchanged since the previous build read it: its stamp stands for its bytes in the fingerprint
    opts.hash?.update(Buffer.from(`${e.rel}\0${stamp.bytes}\0${stamp.mtimeMs}\0`));
    return {
      id: e.rel,
      title: stored.title,
      text: '',
      ...(stored.metadata ? { metadata: stored.metadata } : {}),
      stamp,
      reused: stored,
    };
  }
  let bytes: Uint8Array;
  try {
    bytes = await readRegular(e.abs, opts.maxFileBytes, inside);
  } catch (err) {
    return skip(`cannot read it (${(err as Error).message})`);
  }
  opts.hash?.update(Buffer.from(`${e.rel}\0${bytes.length}\0`));
  opts.hash?.update(bytes);
  let x: ExtractedText;
  try {
    x = await extract(e, bytes, pdfs, opts.signal);
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    if (err instanceof PdfTextError || err instanceof NotText || err instanceof HtmlTooDeep) return skip(err.message);
    return skip(`cannot extract its text (${(err as Error).message})`);
  }
  if (x.text.trim() === '') return skip('no text');
  const metadata: Metadata = {
    source: topFolder(root, e.rel),
    published_at: new Date(e.mtimeMs).toISOString(),
    path: e.rel,
    type: e.kind === 'sniff' ? 'text' : e.kind,
  };
  return {
    id: e.rel,
    title: x.title ?? basename(e.rel),
    text: x.text,
    stamp,
    metadata,
    structure: { sections: x.sections, ...(x.pages ? { pages: x.pages } : {}) },
  };
}

async function extract(
  e: FolderEntry,
  bytes: Uint8Array,
  pdfs: PdfRunner,
  signal?: AbortSignal,
): Promise<ExtractedText> {
  if (e.kind === 'pdf') return pdfs.extract(bytes, signal);
  if (e.kind === 'sniff' && !looksLikeText(bytes))
    throw new NotText('not text (a binary file with no known extension)');
  const text = decodeText(bytes);
  if (e.kind === 'markdown') return extractMarkdown(text);
  if (e.kind === 'html') return extractHtml(text);
  return plainText(text, e.kind === 'text');
}

/**
 * Plain text. A text file's title is its first line, when that line reads as one (short, with a
 * letter in it); a file with no extension (LICENSE, Makefile) is better named by its name.
 */
function plainText(source: string, firstLineTitle: boolean): ExtractedText {
  const text = source
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .trimEnd();
  const nl = text.indexOf('\n');
  const first = (nl < 0 ? text : text.slice(0, nl)).trim();
  const title = firstLineTitle && first.length <= 200 && /\p{L}/u.test(first) && nl >= 0 ? capTitle(first) : undefined;
  return { ...(title ? { title } : {}), text, sections: [] };
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

/**
 * Whether a file with no extension is text: no NUL byte and few control characters in its first
 * 8 KB (a file's own words decide, as `file` and git do; LICENSE, Makefile and TODO are text).
 */
function looksLikeText(bytes: Uint8Array): boolean {
  const head = bytes.subarray(0, 8192);
  let control = 0;
  for (const b of head) {
    if (b === 0) return false;
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c && b !== 0x1b) control++;
  }
  return control <= head.length / 100;
}

/**
 * Reads a file that must still be a regular file inside the folder, within the limit, when opened
 * (it may have changed since it was listed): opened without following a final symlink and without
 * blocking (a FIFO swapped in is refused, not waited on: its open blocked a build for good), and
 * checked on the descriptor to be inside the folder (contained.ts).
 */
async function readRegular(path: Buffer, max: number, inside: Buffer): Promise<Uint8Array> {
  const fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new Error('no longer a regular file');
    if (!openedInside(fh.fd, path, inside)) throw new Error('it now leads outside the folder');
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

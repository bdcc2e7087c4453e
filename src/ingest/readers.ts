import { printable, RetrieverError } from '../errors.js';
import type { Metadata } from '../store/chunk-store.js';
import { readJsonValues } from './json-values.js';
import { readLineBatches } from './lines.js';
import type { ReadOptions, SourceDocument } from './types.js';
import type { CorpusFormat } from '../core/contracts.js';
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { describeFolder, readFolderBatches } from './files/read-folder.js';
import { splitTitleLine } from './title-line.js';
import { capTitle } from './title.js';
import { DEFAULT_FOLDER, type FolderOptions } from './files/walk.js';

/**
 * Readers turn a corpus file of one of the supported formats into a stream of
 * SourceDocuments. All of them stream: memory does not grow with file size.
 */
export async function* readCorpus(
  format: CorpusFormat,
  path: string,
  opts: ReadOptions = {},
): AsyncGenerator<SourceDocument> {
  for await (const batch of readCorpusBatches(format, path, opts)) yield* batch;
}

/**
 * `readCorpus` a batch at a time (the documents of one block read, or up to
 * 256 elements or 1M characters of a JSON array): the ingest loop's way, one
 * promise per batch instead of two per document.
 */
export function readCorpusBatches(
  format: CorpusFormat,
  path: string,
  opts: ReadOptions = {},
): AsyncGenerator<SourceDocument[]> {
  switch (format) {
    case 'wiki18':
      return readJsonlRecords(path, opts, fromWiki18);
    case 'kilt':
      return readJsonlRecords(path, opts, fromKilt);
    case 'jsonl':
      return readJsonlRecords(path, opts, fromGenericJsonl);
    case 'beir':
      return readJsonlRecords(path, opts, fromBeir);
    case 'multihop':
      return readJsonArray(path, opts, fromMultihop);
    case 'graphrag':
      return readJsonArray(path, opts, fromGraphrag);
    case 'files':
      return readFolderBatches(path, {
        ...(opts.folder ?? DEFAULT_FOLDER),
        ...(opts.hash ? { hash: opts.hash } : {}),
        ...(opts.onSkipped ? { onSkipped: opts.onSkipped } : {}),
        ...(opts.onPassedOver ? { onPassedOver: opts.onPassedOver } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.reuse ? { reuse: opts.reuse } : {}),
        onProgress: (bytesRead) => opts.onProgress?.({ bytesRead, totalBytes: 0 }),
      });
  }
}

/**
 * How big the input is (the progress bar's total) and a stamp of its
 * contents that changes whenever they do (a resumed build compares it):
 * size and modification time for a file, every readable file's for a folder.
 */
export function describeSource(
  format: CorpusFormat,
  path: string,
  folder: FolderOptions = DEFAULT_FOLDER,
): { bytes: number; stamp: { size: number; mtime: number } | { stamp: string } } {
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    throw new RetrieverError('BAD_INPUT', `cannot read input ${path}: ${(err as Error).message}; check --input`, {
      cause: err,
    });
  }
  if (format === 'files') {
    if (!st.isDirectory()) {
      throw new RetrieverError(
        'BAD_INPUT',
        `--format files reads a folder, and ${path} is not one: pass the folder as --input`,
      );
    }
    const { bytes, stamp } = describeFolder(path, folder);
    if (bytes === 0) {
      throw new RetrieverError(
        'BAD_INPUT',
        `${path} holds no Markdown, HTML, PDF or text file${folder.include ? ' that --include selects' : ''}: check --input${folder.include ? ' and --include' : ''}`,
      );
    }
    return { bytes, stamp: { stamp: createHash('sha256').update(stamp).digest('hex') } };
  }
  if (st.isDirectory()) {
    throw new RetrieverError(
      'BAD_INPUT',
      `${path} is a folder, and --format ${format} reads one file: pass --format files to index the documents in it, or the corpus file itself`,
    );
  }
  return { bytes: st.size, stamp: { size: st.size, mtime: Math.floor(st.mtimeMs) } };
}

type RecordMapper = (rec: Record<string, unknown>, where: string, index: number, opts: ReadOptions) => SourceDocument;

async function* readJsonlRecords(path: string, opts: ReadOptions, map: RecordMapper): AsyncGenerator<SourceDocument[]> {
  let index = 0;
  for await (const { lines, firstLineNo } of readLineBatches(path, opts)) {
    const docs: SourceDocument[] = [];
    for (let i = 0; i < lines.length; i++) {
      let line = lines[i] as string;
      // a UTF-8 byte order mark (Windows editors write one) is not part of the first record
      if (firstLineNo + i === 1 && line.charCodeAt(0) === 0xfeff) line = line.slice(1);
      if (line.trim() === '') continue;
      const where = `${path} line ${firstLineNo + i}`;
      let rec: unknown;
      try {
        rec = JSON.parse(line);
      } catch (err) {
        throw notJsonLine(where, line, firstLineNo + i, err);
      }
      if (!isObject(rec)) {
        throw new RetrieverError(
          'BAD_INPUT',
          Array.isArray(rec) && firstLineNo + i === 1
            ? `${where}: the file is one JSON array, not JSON lines (one object per line): use --format multihop or graphrag for those datasets' JSON files, or convert it with \`jq -c '.[]' ${path} > corpus.jsonl\``
            : `${where}: expected a JSON object`,
        );
      }
      docs.push(wellFormed(map(rec, where, index++, opts), where, opts));
    }
    if (docs.length > 0) yield docs;
  }
}

/** A line that does not parse: say when the file is really one JSON document spread over lines. */
function notJsonLine(where: string, line: string, lineNo: number, err: unknown): RetrieverError {
  if (err instanceof RangeError) return tooDeep(where, err);
  const head = line.trimStart()[0];
  const document = lineNo === 1 && (head === '[' || head === '{');
  if (line.includes('\u0000')) {
    return new RetrieverError(
      'BAD_INPUT',
      `${where}: holds NUL bytes, so this is a binary file, not JSON lines: pass the corpus's text file (.jsonl, or .jsonl.gz)`,
    );
  }
  return new RetrieverError(
    'BAD_INPUT',
    document
      ? `${where}: not a whole JSON value; the file looks like one JSON ${head === '[' ? 'array' : 'object'} spread over several lines, not JSON lines (one object per line): use --format multihop or graphrag for those datasets' JSON files, or convert it with \`jq -c '${head === '[' ? '.[]' : '.'}' FILE > corpus.jsonl\``
      : `${where}: not valid JSON (${printable((err as Error).message)})`,
    { cause: err },
  );
}

/** A JSON array's elements are batched up to this many, or this many characters of text. */
const ARRAY_BATCH = 256;
const ARRAY_BATCH_CHARS = 1 << 20;

async function* readJsonArray(path: string, opts: ReadOptions, map: RecordMapper): AsyncGenerator<SourceDocument[]> {
  let docs: SourceDocument[] = [];
  let chars = 0;
  for await (const { value, index } of readJsonValues(path, opts)) {
    const where = `${path} element ${index}`;
    if (!isObject(value)) throw new RetrieverError('BAD_INPUT', `${where}: expected a JSON object`);
    const doc = wellFormed(map(value, where, index, opts), where, opts);
    docs.push(doc);
    chars += doc.text.length;
    // a GraphRAG-Bench element is a whole book: never hold many of those at once
    if (docs.length === ARRAY_BATCH || chars >= ARRAY_BATCH_CHARS) {
      yield docs;
      docs = [];
      chars = 0;
    }
  }
  if (docs.length > 0) yield docs;
}

/** Words in a KILT passage: DPR's cut of Wikipedia, which wiki-18 also follows. */
export const KILT_PASSAGE_WORDS = 100;

/**
 * KILT's knowledge source (kilt_knowledgesource.json, the 2019-08-01 dump R1-Searcher and RAG-R1
 * retrieve from): one page a line, `{wikipedia_id, wikipedia_title, text: [paragraphs]}`, the first
 * paragraph being the title. A page is one document (id its `wikipedia_id`), cut as DPR cut
 * wiki-18: the body's words (section markers `Section::::…` dropped, list markers `BULLET::::- `
 * stripped) in consecutive passages of 100, the last one shorter, each stored as `"Title"\npassage`;
 * chunk ids are `<wikipedia_id>#<n>`.
 */
export function fromKilt(rec: Record<string, unknown>, where: string): SourceDocument {
  const raw = rec['wikipedia_id'];
  if ((typeof raw !== 'string' || raw === '') && typeof raw !== 'number') {
    throw new RetrieverError(
      'BAD_INPUT',
      `${where}: missing "wikipedia_id" (kilt expects {"wikipedia_id", "wikipedia_title", "text": [paragraphs]})`,
    );
  }
  const title = capTitle(typeof rec['wikipedia_title'] === 'string' ? rec['wikipedia_title'] : '');
  const text = rec['text'];
  if (!Array.isArray(text) || text.some((p) => typeof p !== 'string')) {
    throw new RetrieverError('BAD_INPUT', `${where}: "text" must be a list of paragraphs (strings)`);
  }
  const paragraphs = (text as string[])
    .slice(text.length > 0 && (text[0] as string).trim() === title.trim() ? 1 : 0)
    .filter((p) => !p.startsWith('Section::::'))
    .map((p) => p.replace(/^BULLET::::-?\s*/, ''));
  const words = paragraphs
    .join(' ')
    .split(/\s+/)
    .filter((w) => w !== '');
  const head = title === '' ? '' : `"${title}"\n`;
  const passages: Array<{ contents: string; bodyStart: number }> = [];
  for (let i = 0; i < words.length; i += KILT_PASSAGE_WORDS) {
    passages.push({ contents: head + words.slice(i, i + KILT_PASSAGE_WORDS).join(' '), bodyStart: head.length });
  }
  return {
    id: String(raw),
    title,
    text: words.join(' '),
    passages,
    metadata: { wikipedia_id: String(raw) },
  };
}

/**
 * FlashRAG / Search-R1 wiki-18: {"id","contents"} where the first line of
 * contents is the quoted title. contents is kept verbatim (it is what
 * e5_Flat.index was embedded from).
 */
export function fromWiki18(rec: Record<string, unknown>, where: string): SourceDocument {
  const id = requireId(rec, 'id', where, '{"id","contents"}');
  const contents = rec['contents'];
  if (typeof contents !== 'string') {
    throw new RetrieverError(
      'BAD_INPUT',
      `${where}: missing string field "contents" (wiki18 expects {"id","contents"}; use --format jsonl for {id,title,text})`,
    );
  }
  const { title, bodyStart } = splitTitleLine(contents);
  return {
    id,
    title,
    text: contents.slice(bodyStart),
    verbatim: { contents, bodyStart },
  };
}

/** Generic jsonl: {id, title?, text|contents, metadata?}. Missing ids become the record index. */
export function fromGenericJsonl(
  rec: Record<string, unknown>,
  where: string,
  index: number,
  opts: ReadOptions = {},
): SourceDocument {
  if (rec['id'] === undefined) opts.onMissingId?.(where);
  const id = rec['id'] === undefined ? String(index) : requireId(rec, 'id', where, '{id, title?, text}');
  const metadata = optionalMetadata(rec, where);
  const title = optionalString(rec, 'title', where);
  if (typeof rec['text'] === 'string') {
    return withMetadata({ id, title: title ?? '', text: rec['text'] }, metadata);
  }
  if (typeof rec['contents'] === 'string') {
    const contents = rec['contents'];
    if (title !== undefined) return withMetadata({ id, title, text: contents }, metadata);
    const split = splitTitleLine(contents);
    return withMetadata(
      {
        id,
        title: split.title,
        text: contents.slice(split.bodyStart),
        verbatim: { contents, bodyStart: split.bodyStart },
      },
      metadata,
    );
  }
  throw new RetrieverError('BAD_INPUT', `${where}: needs a string "text" or "contents" field`);
}

/** BEIR corpus.jsonl: {_id, title, text, metadata?}. */
export function fromBeir(rec: Record<string, unknown>, where: string): SourceDocument {
  const id = requireId(rec, '_id', where, '{_id, title, text}');
  const text = rec['text'];
  if (typeof text !== 'string') throw new RetrieverError('BAD_INPUT', `${where}: missing string field "text"`);
  return withMetadata({ id, title: optionalString(rec, 'title', where) ?? '', text }, optionalMetadata(rec, where));
}

const MULTIHOP_META = ['author', 'source', 'published_at', 'category', 'url'] as const;

/** MultiHop-RAG corpus.json: {title, author, source, published_at, category, url, body}. */
export function fromMultihop(rec: Record<string, unknown>, where: string, index: number): SourceDocument {
  const body = rec['body'];
  if (typeof body !== 'string') {
    throw new RetrieverError('BAD_INPUT', `${where}: missing string field "body" (MultiHop-RAG corpus.json schema)`);
  }
  const metadata: Metadata = {};
  for (const key of MULTIHOP_META) {
    const v = rec[key];
    if (typeof v === 'string' && v !== '') metadata[key] = v;
  }
  return withMetadata({ id: String(index), title: optionalString(rec, 'title', where) ?? '', text: body }, metadata);
}

/** GraphRAG-Bench Datasets/Corpus/*.json: {corpus_name, context}, one object or a list. */
export function fromGraphrag(rec: Record<string, unknown>, where: string): SourceDocument {
  const name = rec['corpus_name'];
  const context = rec['context'];
  if (typeof name !== 'string' || typeof context !== 'string') {
    throw new RetrieverError(
      'BAD_INPUT',
      `${where}: expected {"corpus_name": string, "context": string} (GraphRAG-Bench corpus schema)`,
    );
  }
  return { id: name, title: name, text: context };
}

/**
 * The one rule for lone surrogates (`\ud800` escapes, legal JSON and common in
 * scraped text): each becomes U+FFFD, in the id, title and text alike, before
 * anything is chunked or stored; and the title is capped (title.ts). SQLite would otherwise store each as three
 * U+FFFD, so a hit's id could not be fetched back and `body_start` pointed
 * into the title line. One code unit for one keeps every offset valid.
 */
function wellFormed(read: SourceDocument, where: string, opts: ReadOptions): SourceDocument {
  const title = capTitle(read.title);
  const doc = title === read.title ? read : { ...read, title };
  const v = doc.verbatim;
  const ok = (s: string): boolean => (s as unknown as WellFormedString).isWellFormed();
  if (ok(doc.id) && ok(doc.title) && ok(doc.text) && (!v || ok(v.contents))) return doc;
  opts.onIllFormed?.(where);
  const fix = (s: string): string => (s as unknown as WellFormedString).toWellFormed();
  return {
    ...doc,
    id: fix(doc.id),
    title: fix(doc.title),
    text: fix(doc.text),
    ...(v ? { verbatim: { contents: fix(v.contents), bodyStart: v.bodyStart } } : {}),
  };
}

/** ES2024's String methods (Node ≥ 20), not yet in this project's TypeScript lib. */
interface WellFormedString {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

function requireId(rec: Record<string, unknown>, key: string, where: string, schema: string): string {
  const v = rec[key];
  if (typeof v === 'string' && v !== '') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  throw new RetrieverError('BAD_INPUT', `${where}: missing or empty "${key}" (expected ${schema})`);
}

function optionalString(rec: Record<string, unknown>, key: string, where: string): string | undefined {
  const v = rec[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new RetrieverError('BAD_INPUT', `${where}: "${key}" must be a string`);
  return v;
}

function optionalMetadata(rec: Record<string, unknown>, where: string): Metadata | undefined {
  const v = rec['metadata'];
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw new RetrieverError('BAD_INPUT', `${where}: "metadata" must be a JSON object`);
  const depth = nestingDepth(v);
  if (depth > MAX_METADATA_DEPTH) {
    throw new RetrieverError(
      'BAD_INPUT',
      `${where}: "metadata" is nested ${depth} levels deep; at most ${MAX_METADATA_DEPTH} are stored: flatten it`,
    );
  }
  return v;
}

/** Metadata is stored and returned as JSON: a few levels serve any filter or display; thousands overflowed the stack. */
const MAX_METADATA_DEPTH = 32;

/** How deep objects and arrays nest in `v`, counted without recursion (and stopping past the limit). */
function nestingDepth(v: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[v, 1]];
  while (stack.length > 0) {
    const [x, d] = stack.pop() as [unknown, number];
    if (typeof x !== 'object' || x === null) continue;
    if (d > max) max = d;
    if (max > MAX_METADATA_DEPTH) break;
    for (const child of Object.values(x)) stack.push([child, d + 1]);
  }
  return max;
}

/** A record JSON.parse could not read for its nesting alone. */
function tooDeep(where: string, err: RangeError): RetrieverError {
  return new RetrieverError(
    'BAD_INPUT',
    `${where}: nested too deeply to read (${err.message}): flatten the record's metadata`,
    { cause: err },
  );
}

function withMetadata(doc: SourceDocument, metadata: Metadata | undefined): SourceDocument {
  if (metadata && Object.keys(metadata).length > 0) doc.metadata = metadata;
  return doc;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

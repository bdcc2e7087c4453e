import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describeError, isRetrieverError, printable, RetrieverError } from '../errors.js';
import { Bm25Builder, postingsPerThread } from '../index/bm25/bm25-builder.js';
import { LongLists, writeBlockMaxes } from '../index/bm25/block-max.js';
import { averageLength, lengthNormTable, type Bm25Params } from '../index/bm25/scoring.js';
import type { Bm25BuildStats } from '../index/bm25/bm25-builder.js';
import { MAX_COUNTER_POSTINGS } from '../index/bm25/term-counter.js';
import { INDEX_FILES, validateCorpusName } from '../index/layout.js';
import { filesBytes } from '../index/file-integrity.js';
import { lockBuild } from './build-lock.js';
import type { DenseManifest, Manifest } from '../index/manifest.js';
import { chunkDocument, wordCounter, type ChunkPiece } from '../ingest/chunker.js';
import type { SourceDocument } from '../ingest/types.js';
import type { FolderOptions } from '../ingest/files/walk.js';
import { type TokenCounter } from '../core/contracts.js';
import { describeSource, readCorpusBatches } from '../ingest/readers.js';
import type { CorpusFormat } from '../core/contracts.js';
import { DocReuse } from './doc-reuse.js';
import { ChunkStoreWriter } from '../store/chunk-store-writer.js';
import type { StoredDocument } from '../store/chunk-store.js';
import { createEnglishAnalyzer } from '../text/analyzer.js';
import { fsyncFiles, syncInBackground, writeFileAtomic } from '../util/fs-durable.js';
import type { Logger } from '../util/log.js';
import { createProgress, formatBytes, formatCount, formatDuration, underProgress } from '../util/progress.js';
import { INDEX_FORMAT_VERSION, IVF_INDEX_FORMAT, TOOL_VERSION } from '../version.js';
import { dirBytes, recordFiles } from './file-records.js';
import {
  loadState,
  MAX_SKIPPED_LISTED,
  stateKey,
  STATE_FILE,
  type BuildState,
  type IngestResult,
} from './build-state.js';
import { commitPartial, liveDir, newBuildId, partialDir, preparePartial, verifyBeforePublish } from './index-swap.js';

/** The dense arm of a build, supplied by the encoder side (see encoder/dense-phase.ts). */
export interface DensePhase {
  /** Counts chunk tokens with the encoder's own tokenizer, so chunks fit its window. */
  readonly counter: TokenCounter;
  /** Identity of everything that changes the vectors, for resume checks. */
  readonly fingerprint: string;
  run(ctx: DensePhaseContext): Promise<{ manifest: DenseManifest; files: string[] }>;
}

export interface DensePhaseContext {
  dir: string;
  storePath: string;
  chunkCount: number;
  resume: boolean;
  log: Logger;
  progress: boolean;
  /** Stops the phase between batches, keeping what --resume needs (see BuildOptions.signal). */
  signal?: AbortSignal;
  /** The published index this build replaces, if any: its vectors may serve unchanged chunks. */
  previous?: string;
}

export interface BuildOptions {
  name: string;
  input: string;
  format: CorpusFormat;
  indexDir: string;
  chunkSize: number;
  chunkOverlap: number;
  /** What chunk sizes count: the encoder's tokens ('model', when the build embeds) or words. */
  chunkUnit?: 'model' | 'words';
  bm25: Bm25Params;
  maxPostingsInMemory: number;
  /** BM25 inversion worker threads (0 = inline); inputs under 32 MB always run inline. */
  threads: number;
  /** The `files` format: which files of the folder to read (ingest/files/walk.ts). */
  folder?: FolderOptions;
  dense: DensePhase | null;
  /**
   * Continue an interrupted build of the same input and options: true requires one (and says
   * why not), false starts over, 'auto' continues one when it is there and says so.
   */
  resume: boolean | 'auto';
  rebuildCommand: string;
  log: Logger;
  progress: boolean;
  /**
   * Stops the build between steps (a batch of documents, an encoder batch, a
   * slice of the graph): the promise rejects with the signal's reason, the
   * partial directory keeps every finished phase for --resume, and the lock
   * is released. Nothing is published.
   */
  signal?: AbortSignal;
  /**
   * Hears that the text phase (store and BM25) is finished and on disk while the dense phase is
   * still to run, with the build's directory and a provisional manifest (no files, no dense arm):
   * a server's first run answers BM25 from them meanwhile. Those files are not written again
   * but for one meta row at the end.
   */
  onTextPhase?: (ready: TextPhaseReady) => void | Promise<void>;
  /** A folder rebuilt takes unchanged files' documents from the index it replaces (doc-reuse.ts); unset: true. */
  reuseDocuments?: boolean;
}

export interface TextPhaseReady {
  dir: string;
  manifest: Manifest;
}

export interface BuildSummary {
  name: string;
  dir: string;
  manifest: Manifest;
  seconds: number;
  bytes: { total: number; store: number; bm25: number; dense: number };
}

/** Below this input size worker start-up costs more than it saves. */
const INLINE_BELOW_BYTES = 32 * 2 ** 20;

/** What the text phase writes (and a resumed build reuses). */
const TEXT_PHASE_FILES = [INDEX_FILES.store, INDEX_FILES.postings, INDEX_FILES.norms, INDEX_FILES.blocks];

/**
 * build-index: ingest → chunk → SQLite + BM25 in one streaming pass, then the
 * dense arm, then an atomic swap into place. Phases that finished survive an
 * interruption: `resume` skips them when the input and options are unchanged.
 */
export async function buildIndex(opts: BuildOptions): Promise<BuildSummary> {
  validateCorpusName(opts.name);
  const lock = lockBuild(opts.indexDir, opts.name);
  try {
    return await buildLocked(opts);
  } catch (err) {
    throw notePartialKept(opts, freeSpaceOnFullDisk(opts, err));
  } finally {
    lock.release();
  }
}

/**
 * A failed build says where its partial directory stays and what to do with
 * it: it was left behind in silence, holding its space. One with no finished
 * phase holds nothing to resume and is removed. A stop says so in its own
 * words (the CLI's resume hint); a full disk removed it.
 */
function notePartialKept(opts: BuildOptions, err: unknown): unknown {
  const dir = partialDir(opts.indexDir, opts.name);
  if (isRetrieverError(err, 'STOPPED') || !existsSync(dir)) return err;
  if (!existsSync(join(dir, STATE_FILE))) {
    rmSync(dir, { recursive: true, force: true });
    return err;
  }
  const code = err instanceof RetrieverError ? err.code : 'BUILD';
  const kept =
    `; the partial build is kept in ${dir}: \`${opts.rebuildCommand} --resume\` continues it once the cause is fixed, ` +
    'or delete it to free its space';
  return new RetrieverError(code, `${describeError(err)}${kept}`, { cause: err });
}

/**
 * A build that ran out of disk space removes its partial directory: kept for
 * --resume, it would hold the disk full, and a resume cannot continue before
 * space is freed anyway.
 */
function freeSpaceOnFullDisk(opts: BuildOptions, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? (err as { cause?: { code?: string } })?.cause?.code;
  const full =
    code === 'ENOSPC' ||
    code === 'SQLITE_FULL' ||
    /ENOSPC|SQLITE_FULL|database or disk is full/.test(String((err as Error)?.message));
  if (!full) return err;
  const dir = partialDir(opts.indexDir, opts.name);
  rmSync(dir, { recursive: true, force: true });
  return new RetrieverError(
    'BUILD',
    `the disk holding ${resolve(opts.indexDir)} is full (${(err as Error).message}): the partial build was removed to free its space; ` +
      'free some space (or pass --index-dir on a larger disk) and build again; the previous index, if any, still serves',
    { cause: err },
  );
}

async function buildLocked(opts: BuildOptions): Promise<BuildSummary> {
  const started = performance.now();
  const input = resolve(opts.input);
  const source = describeSource(opts.format, input, opts.folder);
  const key = stateKey({ ...opts, dense: opts.dense?.fingerprint ?? null }, input, source.stamp);
  const { dir, resumed } = preparePartial(opts.indexDir, opts.name, resumeOrNot(opts, key));
  let state: BuildState = { key };
  if (resumed) state = loadState(dir, key, opts.log);

  const storePath = join(dir, INDEX_FILES.store);
  const ing = await textPhase(opts, state, { path: input, bytes: source.bytes }, dir, storePath);
  opts.signal?.throwIfAborted();
  if (opts.dense && opts.onTextPhase) {
    const provisional = makeManifest(opts, { path: input, bytes: source.bytes }, ing, null, 'text-phase', started);
    try {
      await opts.onTextPhase({ dir, manifest: provisional });
    } catch (err) {
      opts.log.warn(`BM25 could not answer before the vectors are in (${describeError(err)}); the build goes on`);
    }
  }
  const dense = opts.dense
    ? await opts.dense.run({
        dir,
        storePath,
        chunkCount: ing.chunks,
        resume: resumed,
        log: opts.log,
        progress: opts.progress,
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(existsSync(liveDir(opts.indexDir, opts.name)) ? { previous: liveDir(opts.indexDir, opts.name) } : {}),
      })
    : null;
  opts.signal?.throwIfAborted();
  const buildId = newBuildId();
  const manifest = makeManifest(
    opts,
    { path: input, bytes: source.bytes },
    ing,
    dense?.manifest ?? null,
    buildId,
    started,
  );
  await finishFiles(opts, dir, storePath, manifest, dense?.files ?? []);
  // a stop that came while the files were checksummed keeps the partial build: nothing is published
  opts.signal?.throwIfAborted();
  const published = commitPartial(opts.indexDir, opts.name, buildId);
  if (published.keptPrevious) {
    opts.log.warn(
      `the previous ${opts.name} was not a build of this tool's own (a hand-made directory or symlink), so it was left in place: ` +
        `${published.keptPrevious}; remove it once you no longer need it`,
    );
  }

  const size = (names: string[]): number => names.reduce((s, n) => s + (manifest.files[n]?.bytes ?? 0), 0);
  return {
    name: opts.name,
    dir: liveDir(opts.indexDir, opts.name),
    manifest,
    seconds: (performance.now() - started) / 1000,
    bytes: {
      total: dirBytes(published.dir),
      store: size([INDEX_FILES.store]),
      bm25: size([INDEX_FILES.postings, INDEX_FILES.norms, INDEX_FILES.blocks]),
      dense: size(dense?.files ?? []),
    },
  };
}

/**
 * Whether this build continues the interrupted one in the partial directory. A plain run ('auto')
 * does when that build had the same input and options, saying so, and starts over, saying why,
 * when it had others; --resume with nothing to continue is an error, never a quiet fresh start.
 */
function resumeOrNot(opts: BuildOptions, key: string): boolean {
  if (opts.resume === false) return false;
  const dir = partialDir(opts.indexDir, opts.name);
  // a partial path that is not a directory of ours is preparePartial's to refuse (--resume) or remove
  if (!ownPartialDir(dir)) return opts.resume === true;
  const why = whyNotResumable(dir, key);
  if (opts.resume === true) {
    if (why === 'nothing') {
      throw new RetrieverError(
        'BAD_INPUT',
        `--resume: there is no interrupted build of ${opts.name} to continue in ${dir}: run the same command without --resume`,
      );
    }
    return true; // loadState names a mismatch and the fix
  }
  if (why === undefined) {
    opts.log.info(`continuing the interrupted build of ${opts.name} (--no-resume starts over)`);
    return true;
  }
  if (why !== 'nothing') opts.log.info(`an interrupted build of ${opts.name} is not continued (${why}): starting over`);
  return false;
}

function ownPartialDir(dir: string): boolean {
  try {
    const st = lstatSync(dir);
    return st.isDirectory() && (process.getuid?.() === undefined || st.uid === process.getuid());
  } catch {
    return true; // nothing there: nothing to continue, said by whyNotResumable
  }
}

/** Why the partial directory holds no build to continue with this key: 'nothing' to continue, or the mismatch. */
function whyNotResumable(dir: string, key: string): 'nothing' | string | undefined {
  const statePath = join(dir, STATE_FILE);
  if (!existsSync(statePath)) return 'nothing';
  try {
    return (JSON.parse(readFileSync(statePath, 'utf8')) as BuildState).key === key
      ? undefined
      : 'it read another input, or used other options';
  } catch {
    return 'its state file is unreadable';
  }
}

/** The text phase (chunks, store, BM25), or its result from the interrupted build being resumed. */
async function textPhase(
  opts: BuildOptions,
  state: BuildState,
  input: Input,
  dir: string,
  storePath: string,
): Promise<IngestResult> {
  // a text phase left by a version that wrote no block-max file is done again
  if (state.ingest && existsSync(join(dir, INDEX_FILES.blocks))) {
    opts.log.info(`resume: text and BM25 phase already done (${formatCount(state.ingest.chunks)} chunks)`);
    return state.ingest;
  }
  for (const f of TEXT_PHASE_FILES) rmSync(join(dir, f), { force: true });
  state.ingest = await ingest(opts, input, dir, storePath);
  // the bulk load writes without a journal or fsync, and a resumed build trusts these files once
  // the state file says the phase is done: they reach the disk first (a power cut could otherwise
  // leave a torn store for a resume to reuse). The journaled meta update at the end then has
  // little left to flush (1M build: 730 ms of fsync there before, 40 ms after).
  const phaseFiles = TEXT_PHASE_FILES.map((f) => join(dir, f));
  const phaseBytes = filesBytes(phaseFiles);
  opts.log.info(`writing the text phase's ${formatBytes(phaseBytes)} to disk…`);
  await underProgress(
    { label: 'sync to disk', total: phaseBytes, unit: 'MB', scale: 1e6, enabled: opts.progress },
    () => fsyncFiles(phaseFiles),
  );
  writeFileAtomic(join(dir, STATE_FILE), JSON.stringify(state));
  return state.ingest;
}

/** The corpus file or folder, and the bytes it holds. */
interface Input {
  path: string;
  bytes: number;
}

function makeManifest(
  opts: BuildOptions,
  input: Input,
  ing: IngestResult,
  dense: DenseManifest | null,
  buildId: string,
  started: number,
): Manifest {
  return {
    // an IVF index is format 3: an older server refuses it by its version, not by a missing graph
    format_version: dense?.ann?.library === 'retriever-mcp' ? IVF_INDEX_FORMAT : INDEX_FORMAT_VERSION,
    tool_version: TOOL_VERSION,
    build_id: buildId,
    built_at: new Date().toISOString(),
    build_seconds: Math.round((performance.now() - started) / 100) / 10,
    rebuild_command: opts.rebuildCommand,
    corpus: {
      name: opts.name,
      format: opts.format,
      source: { path: input.path, bytes: input.bytes, sha256: ing.sourceSha256 },
      documents: ing.documents,
      chunks: ing.chunks,
      tokens: ing.tokens,
      ...(ing.skipped ? { skipped: ing.skipped } : {}),
    },
    chunker: {
      size: opts.chunkSize,
      overlap: opts.chunkSize > 0 ? opts.chunkOverlap : 0,
      // a state file from an older build resumed here has no tokenizer: then it was the encoder's
      tokenizer: (ing.tokenizer as string | undefined) ?? opts.dense?.counter.id ?? wordCounter.id,
    },
    bm25: {
      analyzer: createEnglishAnalyzer().id,
      k1: opts.bm25.k1,
      b: opts.bm25.b,
      doc_count: ing.bm25.docCount,
      total_tokens: ing.bm25.totalTokens,
      terms: ing.bm25.terms,
      postings: ing.bm25.postings,
    },
    dense,
    files: {},
  };
}

/**
 * The build's tail: the store's copy of the manifest, every file synced and
 * checksummed, manifest.json written and checked against the files.
 */
async function finishFiles(
  opts: BuildOptions,
  dir: string,
  storePath: string,
  manifest: Manifest,
  denseFiles: string[],
): Promise<void> {
  // the store carries its own copy of the core manifest, tied to this build id
  const writer = ChunkStoreWriter.reopen(storePath);
  writer.setMeta('build_id', manifest.build_id);
  writer.setMeta('manifest', JSON.stringify({ ...manifest, files: undefined }));
  writer.close();
  const fileNames = [...TEXT_PHASE_FILES, ...denseFiles];
  const bytes = filesBytes(fileNames.map((f) => join(dir, f)));
  opts.log.info(`checksumming ${formatBytes(bytes)} of index files…`);
  // the dense files alone have not been synced yet (the text phase's files were, and the meta
  // update's commit synced the store): their writeback runs while they are hashed, so the fsyncs
  // before the swap find little left to do
  const bar = { label: 'checksums', total: bytes, unit: 'MB', scale: 1e6, enabled: opts.progress };
  const [, files] = await underProgress(bar, (p) =>
    Promise.all([
      fsyncFiles(denseFiles.map((f) => join(dir, f))),
      recordFiles(dir, fileNames, opts.signal, (done) => p.update(done)),
    ]),
  );
  manifest.files = files;
  writeFileAtomic(join(dir, INDEX_FILES.manifest), `${JSON.stringify(manifest, null, 2)}\n`);
  verifyBeforePublish(dir, manifest);
  rmSync(join(dir, STATE_FILE), { force: true });
}

async function ingest(opts: BuildOptions, input: Input, dir: string, storePath: string): Promise<IngestResult> {
  const counter = opts.chunkUnit === 'words' ? wordCounter : (opts.dense?.counter ?? wordCounter);
  // a folder rebuilt: unchanged files' documents come from the index being replaced
  const previous = liveDir(opts.indexDir, opts.name);
  const docs =
    opts.format === 'files' && opts.reuseDocuments !== false && existsSync(previous)
      ? DocReuse.open(
          previous,
          {
            chunker: {
              size: opts.chunkSize,
              overlap: opts.chunkSize > 0 ? opts.chunkOverlap : 0,
              tokenizer: opts.chunkSize > 0 ? counter.id : wordCounter.id,
            },
          },
          opts.log,
        )
      : undefined;
  try {
    return await ingestWith(opts, input, dir, storePath, counter, docs);
  } finally {
    docs?.close();
  }
}

async function ingestWith(
  opts: BuildOptions,
  input: Input,
  dir: string,
  storePath: string,
  counter: TokenCounter,
  docs: DocReuse | undefined,
): Promise<IngestResult> {
  const writer = new ChunkStoreWriter(storePath);
  const bm25 = openBm25Builder(opts, input, dir);
  const hash = createHash('sha256');
  const phaseStart = performance.now();
  let storeSync: ReturnType<typeof syncInBackground> | undefined;
  try {
    const { tokens, split, skipped } = await loadChunks(opts, input, writer, bm25, hash, counter, docs);
    if (docs) opts.log.info(docs.summary());
    opts.log.info(`indexing ${formatCount(writer.chunkCount)} chunks (ids, BM25 postings)…`);
    const readS = (performance.now() - phaseStart) / 1000;
    const t = performance.now();
    let idsS = 0;
    // the id indexes are built on this thread while the BM25 workers merge, and the chunk rows,
    // final from then on, start for the disk meanwhile (the fsync after the phase then has only
    // the term dictionary and the BM25 files left)
    const longLists = new LongLists();
    const stats = await bm25.finish(
      join(dir, INDEX_FILES.postings),
      join(dir, INDEX_FILES.norms),
      (entries) => writer.writeTerms(longLists.tap(entries)),
      () => {
        const ids = performance.now();
        writer.finishIngest();
        idsS = (performance.now() - ids) / 1000;
        storeSync = syncInBackground(storePath);
      },
    );
    const mergeS = (performance.now() - t) / 1000;
    const blocksS = writeBlocks(opts, dir, stats, longLists);
    const totalS = (performance.now() - phaseStart) / 1000;
    // the whole text + BM25 phase, the figure a build-throughput goal is about
    opts.log.info(
      `text and BM25 phase: ${formatCount(writer.chunkCount)} chunks in ${totalS.toFixed(1)}s ` +
        `(${formatCount(writer.chunkCount / totalS)} chunks/s; read and invert ${readS.toFixed(1)}s, ` +
        `then ${mergeS.toFixed(1)}s for the BM25 merge and term dictionary with the id indexes (${idsS.toFixed(1)}s) built meanwhile: ` +
        `${stats.runs} runs in ${stats.mergeParts} parts; block maxes ${blocksS.toFixed(1)}s)`,
    );
    return {
      documents: writer.documentCount,
      chunks: writer.chunkCount,
      tokens,
      tokenizer: split ? counter.id : wordCounter.id,
      sourceSha256: hash.digest('hex'),
      bm25: stats,
      ...(skipped ? { skipped } : {}),
    };
  } catch (err) {
    await bm25.abort();
    throw err;
  } finally {
    writer.close();
    // after SQLite's close (see syncInBackground); a failure shows again in the fsync after the phase
    await storeSync?.finish().catch(() => undefined);
  }
}

/** The BM25 inverter, on worker threads unless the input is small. */
/** The block-max file for the postings just written; returns its seconds. */
function writeBlocks(opts: BuildOptions, dir: string, stats: Bm25BuildStats, lists: LongLists): number {
  const t = performance.now();
  opts.log.info(`cutting ${formatCount(lists.count)} long postings lists into scored blocks…`);
  const avgdl = averageLength(stats);
  writeBlockMaxes({
    postingsPath: join(dir, INDEX_FILES.postings),
    norms: readFileSync(join(dir, INDEX_FILES.norms)),
    lists,
    params: opts.bm25,
    avgdl,
    normTable: lengthNormTable(opts.bm25, avgdl),
    out: join(dir, INDEX_FILES.blocks),
  });
  return (performance.now() - t) / 1000;
}

function openBm25Builder(opts: BuildOptions, input: Input, dir: string): Bm25Builder {
  const workers = input.bytes < INLINE_BELOW_BYTES ? 0 : opts.threads;
  const perThread = postingsPerThread(opts.maxPostingsInMemory, workers);
  if (perThread > MAX_COUNTER_POSTINGS) {
    opts.log.warn(
      `--max-postings-in-memory ${opts.maxPostingsInMemory} gives each BM25 thread ${formatCount(perThread)} postings; ` +
        `a thread holds at most ${formatCount(MAX_COUNTER_POSTINGS)} (WebAssembly addresses 4 GB), so it spills at that ` +
        `size (the index is the same)`,
    );
  }
  return new Bm25Builder(createEnglishAnalyzer(), {
    maxPostingsInMemory: opts.maxPostingsInMemory,
    tempDir: dir,
    workers,
  });
}

/** Reads, chunks and stores every document, handing each chunk to the BM25 inverter; progress on stderr. */
async function loadChunks(
  opts: BuildOptions,
  input: Input,
  writer: ChunkStoreWriter,
  bm25: Bm25Builder,
  hash: { update(data: Uint8Array): unknown },
  counter: TokenCounter,
  docs?: DocReuse,
): Promise<{ tokens: number; split: boolean; skipped?: IngestResult['skipped'] }> {
  const chunking = { size: opts.chunkSize, overlap: opts.chunkOverlap, counter };
  const progress = createProgress({
    label: `ingest ${opts.name}`,
    total: input.bytes,
    unit: 'MB',
    scale: 1e6,
    enabled: opts.progress,
  });
  let tokens = 0;
  let bytesRead = 0;
  let split = false; // did any document go through the token-budget splitter (else counts are words)
  const counts = (): string => `${formatCount(writer.documentCount)} docs ${formatCount(writer.chunkCount)} chunks`;
  let missingIds = 0;
  let firstMissing = '';
  let illFormed = 0;
  let firstIllFormed = '';
  let empty = 0;
  let firstEmpty = '';
  const skipped: NonNullable<IngestResult['skipped']> = { count: 0, files: [] };
  let passedOver: Record<string, number> = {};
  const batches = readCorpusBatches(opts.format, input.path, {
    hash,
    ...(opts.folder ? { folder: opts.folder } : {}),
    onSkipped: (s) => {
      if (skipped.count++ < MAX_SKIPPED_LISTED) skipped.files.push({ path: s.rel, reason: s.reason });
    },
    onPassedOver: (byExtension) => (passedOver = byExtension),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(docs ? { reuse: (id: string, bytes: number, mtimeMs: number) => docs.lookup(id, bytes, mtimeMs) } : {}),
    onProgress: (p) => (bytesRead = p.bytesRead),
    onMissingId: (where) => {
      if (missingIds++ === 0) firstMissing = where;
    },
    onIllFormed: (where) => {
      if (illFormed++ === 0) firstIllFormed = where;
    },
  });
  try {
    await ingestBatches();
  } finally {
    progress.close();
  }
  /** A document taken over from the previous build as it was stored; returns its tokens. */
  async function addStored(doc: SourceDocument, stored: StoredDocument): Promise<number> {
    const docNum = writer.addDocument({
      id: doc.id,
      title: stored.title,
      ...(stored.metadata ? { metadata: stored.metadata } : {}),
    });
    if (doc.stamp) writer.addFileStamp(doc.id, doc.stamp.bytes, doc.stamp.mtimeMs);
    let n = 0;
    for (const [position, c] of stored.chunks.entries()) {
      const num = writer.addChunk({
        id: c.id,
        docNum,
        position,
        contents: c.contents,
        bodyStart: c.bodyStart,
        nTokens: c.nTokens,
      });
      const wait = bm25.add(num, c.contents);
      if (wait) await wait;
      n += c.nTokens;
    }
    return n;
  }
  async function ingestBatches(): Promise<void> {
    for await (const docs of batches) {
      opts.signal?.throwIfAborted();
      for (const doc of docs) {
        if (doc.reused) {
          tokens += await addStored(doc, doc.reused);
          if (opts.chunkSize > 0) split = true;
          continue;
        }
        // a reader's own passages (KILT) are numbered like split chunks, but counted in words
        const suffixIds = (opts.chunkSize > 0 && !doc.verbatim) || doc.passages !== undefined;
        if (suffixIds && !doc.passages) split = true;
        const pieces = chunkDocument(doc, chunking);
        const docNum = writer.addDocument(withChunkPages(doc, pieces));
        if (doc.stamp) writer.addFileStamp(doc.id, doc.stamp.bytes, doc.stamp.mtimeMs);
        if (pieces.length === 0 && empty++ === 0) firstEmpty = doc.id;
        for (const piece of pieces) {
          const num = writer.addChunk({
            id: suffixIds ? `${doc.id}#${piece.position}` : doc.id,
            docNum,
            position: piece.position,
            contents: piece.contents,
            bodyStart: piece.bodyStart,
            nTokens: piece.nTokens,
          });
          const wait = bm25.add(num, piece.contents);
          if (wait) await wait;
          tokens += piece.nTokens;
        }
      }
      progress.update(bytesRead, counts);
    }
    progress.update(bytesRead);
    progress.finish(counts());
  }
  if (missingIds > 0) {
    opts.log.warn(
      `${formatCount(missingIds)} records had no "id" (the first at ${firstMissing}) and were numbered by their position in the file; ` +
        'give each record an "id" so that fetch, filters and evaluations can name it across rebuilds',
    );
  }
  if (illFormed > 0) {
    opts.log.warn(
      `${formatCount(illFormed)} records held lone surrogates (invalid UTF-16 such as "\\ud800") in their id, title or text ` +
        `(the first at ${firstIllFormed}); each was replaced by U+FFFD, so ids are stored and fetched as shown`,
    );
  }
  if (empty > 0) {
    opts.log.warn(
      `${formatCount(empty)} documents had no text and got no chunk (the first: id ${JSON.stringify(firstEmpty)}); ` +
        'search cannot find them: give them text or leave them out',
    );
  }
  if (skipped.count > 0) reportSkipped(opts.log, skipped);
  const others = Object.entries(passedOver).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  if (others.length > 0) {
    const n = others.reduce((t, [, c]) => t + c, 0);
    opts.log.info(
      `${formatCount(n)} file(s) of other kinds were passed over (${others
        .slice(0, 8)
        .map(([ext, c]) => `${ext} ${c}`)
        .join(', ')}${others.length > 8 ? ', …' : ''}); --include reads them as text`,
    );
  }
  if (writer.chunkCount === 0) {
    throw new RetrieverError(
      'BAD_INPUT',
      `${input.path} holds no documents with text (format ${opts.format}); check --input and --format`,
    );
  }
  return { tokens, split, ...(opts.format === 'files' ? { skipped } : {}) };
}

/** A folder's files that were not indexed: named, so a user can fix or exclude them. */
function reportSkipped(log: Logger, s: NonNullable<IngestResult['skipped']>): void {
  log.warn(describeSkipped(s));
}

/** The skipped files as lines, twenty at most: said when they are met, and again in the summary. */
function describeSkipped(s: NonNullable<IngestResult['skipped']>): string {
  const shown = s.files.slice(0, 20);
  return (
    // a file name may hold a line break: escaped, it cannot pass for a log line of its own
    `${formatCount(s.count)} file(s) were not indexed:\n${shown.map((f) => `  ${printable(f.path, 300)}: ${printable(f.reason, 300)}`).join('\n')}` +
    (s.count > shown.length
      ? `\n  … and ${formatCount(s.count - shown.length)} more (manifest.json lists ${s.files.length})`
      : '')
  );
}

/** A PDF's chunks carry their pages: kept once in the document's metadata, by chunk position. */
function withChunkPages(doc: SourceDocument, pieces: ChunkPiece[]): SourceDocument {
  if (!doc.structure?.pages || pieces.length === 0) return doc;
  return { ...doc, metadata: { ...doc.metadata, chunk_pages: pieces.map((p) => p.pages ?? null) } };
}

export function formatSummary(s: BuildSummary): string {
  const c = s.manifest.corpus;
  const parts = [
    `built ${s.name}: ${formatCount(c.documents)} documents, ${formatCount(c.chunks)} chunks, ${formatCount(c.tokens)} tokens`,
    `in ${formatDuration(s.seconds)}`,
    `index ${formatBytes(s.bytes.total)} (store ${formatBytes(s.bytes.store)}, bm25 ${formatBytes(s.bytes.bm25)}${s.bytes.dense ? `, dense ${formatBytes(s.bytes.dense)}` : ''})`,
    `at ${s.dir}`,
  ];
  // the files a folder's build passed over are said again at its end (an hour of embedding
  // scrolls them away), and so by a resumed build, whose text phase was done before
  const skipped = c.skipped && c.skipped.count > 0 ? `\n${describeSkipped(c.skipped)}` : '';
  return parts.join('; ') + skipped;
}

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { redactSecrets, RetrieverError } from '../errors.js';
import { editDistance } from '../util/edit-distance.js';
import { Bm25Pool } from '../index/bm25/bm25-pool.js';
import { Bm25Searcher } from '../index/bm25/bm25-searcher.js';
import type { SearchWorkerInit } from '../index/bm25/bm25-search-worker.js';
import { INDEX_FILES, validateCorpusName } from '../index/layout.js';
import { verifyFiles, verifyFilesInBackground, type VerifyMode } from '../index/file-integrity.js';
import { readManifest, type Manifest } from '../index/manifest.js';
import { ChunkStore, type Facets } from '../store/chunk-store.js';
import { createEnglishAnalyzer } from '../text/analyzer.js';
import type { Logger } from '../util/log.js';
import { formatBytes } from '../util/progress.js';
import { shellQuote } from '../util/shell-quote.js';
import { READABLE_STORE_SCHEMAS } from '../version.js';
import { FilterCache } from './filters.js';
import type { SearchMode } from './types.js';
import type { DenseArm } from '../core/contracts.js';

/** One served corpus: its checked manifest, chunk store, BM25 arm and optional dense arm. */
export interface OpenCorpus {
  readonly kind: 'local';
  readonly name: string;
  readonly dir: string;
  readonly manifest: Manifest;
  readonly store: ChunkStore;
  readonly bm25: Bm25Searcher;
  /** BM25 worker threads (`bm25Threads` > 0): unfiltered BM25 and hybrid searches split their chunk range with all of them. */
  readonly bm25Pool: Bm25Pool | null;
  readonly dense: DenseArm | null;
  readonly modes: SearchMode[];
  /** Resolves metadata filters to chunk sets (cached). */
  readonly filters: FilterCache;
  /** What filters can select here (sources, categories, dates); computed on first use, then kept. */
  facets(): Facets;
  /** Settles when every checksum has been checked: at once, unless the check runs in the background (`verifyInBackground`). */
  readonly integrity: Promise<void>;
  /** Set while a build's text phase serves alone: the modes that join once its vectors are published. */
  readonly pending?: PendingArms;
  /**
   * Set while a folder's update is embedding: this corpus is the update's text phase, which
   * answers BM25 (and fetch), and `behind` the build it replaces, which answers dense and hybrid
   * until the update is published whole. A search runs on one of them, never on both.
   */
  readonly behind?: OpenCorpus;
  close(): void;
}

/** The arms of a corpus that a running build has not published yet. */
export interface PendingArms {
  /** The modes that join once the dense arm is published. */
  readonly modes: readonly SearchMode[];
  /** Where the dense arm stands, e.g. "dense 43% embedded, about 6m00s left". */
  status(): string;
}

/** Opens the dense arm of an index; supplied by the dense module so this file stays ANN-agnostic. */
export type DenseOpener = (dir: string, manifest: Manifest, fixHint: string, checked: IntegrityChecked) => DenseArm;

/** What the checks before opening covered: every byte of every file, or less (`sizes`, `sample`, background). */
export interface IntegrityChecked {
  everyByte: boolean;
}

export function fixHintFor(name: string, manifest?: Manifest, indexDir?: string): string {
  if (manifest?.rebuild_command) return `rebuild it with \`${redactSecrets(manifest.rebuild_command)}\``;
  const dirFlag = indexDir !== undefined ? ` --index-dir ${shellQuote(indexDir)}` : '';
  return `build it with \`retriever-mcp build --name ${name} --input PATH --format FORMAT${dirFlag}\` (see README)`;
}

/** The built indexes in `indexDir` (names with a manifest), sorted. */
export function listIndexes(indexDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(indexDir);
  } catch {
    return [];
  }
  return names.filter((n) => !n.startsWith('.') && existsSync(join(indexDir, n, INDEX_FILES.manifest))).sort();
}

/** What to say when `indexDir/name` holds no index: what does exist, the nearest name, and the build command. */
export function missingIndexHint(indexDir: string, name: string): string {
  const have = listIndexes(indexDir);
  const near = closest(name, have);
  const parts = [
    ...(near ? [`Did you mean --corpus ${near}?`] : []),
    have.length > 0 ? `It holds: ${have.join(', ')}.` : 'It holds no indexes.',
    `Or ${fixHintFor(name, undefined, indexDir)}.`,
  ];
  return parts.join(' ');
}

/** The name within edit distance 2 (or sharing a prefix of 4+) of `name`, if one is clearly nearest. */
function closest(name: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const n of names) {
    const d = editDistance(name.toLowerCase(), n.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = n;
    }
  }
  if (best === undefined) return undefined;
  const prefix = name.length >= 4 && best.toLowerCase().startsWith(name.toLowerCase().slice(0, 4));
  return bestD <= 2 || prefix ? best : undefined;
}

/**
 * Opens `indexDir/name` after checking its manifest: format version, file
 * sizes, analyzer, schema version and that the SQLite store belongs to the
 * same build. Any mismatch is a one-line error naming the file and the fix.
 */
export interface OpenOptions {
  openDense?: DenseOpener;
  /**
   * Checksums checked before serving: every block ('full'), first/last/random
   * blocks ('sample'), or sizes only. 'auto' = full up to 4 GiB of index,
   * sample above.
   */
  verify?: VerifyMode | 'auto';
  /**
   * With 'auto' up to 4 GiB: check each file's first and last block now and
   * the others on a worker thread afterwards (`integrity`), so a server
   * answers before the whole index is hashed. Off: every block now.
   */
  verifyInBackground?: boolean;
  log?: Logger;
  /** Worker threads that each take an equal part of the chunk range of unfiltered BM25 and hybrid searches, beside the calling thread's part; 0 (the default) searches on the calling thread. */
  bm25Threads?: number;
}

const FULL_VERIFY_MAX_BYTES = 4 * 2 ** 30;

/** The BM25 files and statistics of the index in `dir`, as its searchers (inline or on a thread) open them. */
export function bm25Files(dir: string, manifest: Manifest): Omit<SearchWorkerInit, 'storePath'> {
  return {
    postingsPath: join(dir, INDEX_FILES.postings),
    normsPath: join(dir, INDEX_FILES.norms),
    // indexes from before the block-max file are scored exhaustively
    ...(manifest.files[INDEX_FILES.blocks] ? { blocksPath: join(dir, INDEX_FILES.blocks) } : {}),
    stats: {
      docCount: manifest.bm25.doc_count,
      chunkCount: manifest.corpus.chunks,
      totalTokens: manifest.bm25.total_tokens,
    },
    params: { k1: manifest.bm25.k1, b: manifest.bm25.b },
  };
}

export function openCorpus(indexDir: string, name: string, opts: OpenOptions | DenseOpener = {}): OpenCorpus {
  const o: OpenOptions = typeof opts === 'function' ? { openDense: opts } : opts;
  const openDense = o.openDense;
  validateCorpusName(name);
  const dir = join(indexDir, name);
  if (!existsSync(join(dir, INDEX_FILES.manifest))) {
    throw new RetrieverError('INDEX_MISSING', `no index ${name} in ${indexDir}. ${missingIndexHint(indexDir, name)}`);
  }
  const manifest = readManifest(dir, fixHintFor(name, undefined, indexDir));
  const hint = fixHintFor(name, manifest);
  const total = Object.values(manifest.files).reduce((s, f) => s + f.bytes, 0);
  let mode = o.verify ?? 'auto';
  let background = false;
  if (mode === 'auto') {
    mode = total <= FULL_VERIFY_MAX_BYTES ? 'full' : 'sample';
    background = mode === 'full' && o.verifyInBackground === true;
    if (mode === 'sample')
      o.log?.info(`${name}: ${formatBytes(total)} index; checking sampled blocks (use --verify full for every byte)`);
  }
  // in the background: each file's first and last block now (a truncated or half-copied file fails here)
  if (background) verifyFiles(dir, manifest.files, 'sample', hint, 0);
  else verifyFiles(dir, manifest.files, mode, hint);
  const analyzer = createEnglishAnalyzer();
  checkAnalyzer(dir, manifest, analyzer.id, hint);
  const storePath = join(dir, INDEX_FILES.store);
  const store = new ChunkStore(storePath, hint);
  const closers: Array<() => void> = [() => store.close()];
  try {
    let integrity = Promise.resolve();
    if (background) {
      const check = verifyFilesInBackground(dir, manifest.files, hint);
      closers.push(() => void check.stop());
      integrity = check.done;
      // a rejection nobody awaited would end the process; the caller decides what a failed check means
      integrity.catch(() => undefined);
    }
    checkStore(store, storePath, manifest, hint);
    const files = bm25Files(dir, manifest);
    const bm25 = new Bm25Searcher({ ...files, lookupTerm: (t) => store.lookupTerm(t), analyzer });
    closers.push(() => bm25.close());
    const threads = o.bm25Threads ?? 0;
    const bm25Pool =
      threads > 0 ? new Bm25Pool({ ...files, storePath }, threads, bm25, (m) => o.log?.warn(`${name}: ${m}`)) : null;
    if (bm25Pool) closers.push(() => void bm25Pool.close());
    let dense: DenseArm | null = null;
    if (manifest.dense) {
      if (!openDense) {
        throw new RetrieverError('INTERNAL', `${dir} has a dense index but no dense reader was configured`);
      }
      dense = openDense(dir, manifest, hint, { everyByte: mode === 'full' && !background });
      const arm = dense;
      closers.push(() => arm.close());
    }
    const modes: SearchMode[] = dense ? ['hybrid', 'dense', 'bm25'] : ['bm25'];
    let facets: Facets | undefined;
    return {
      kind: 'local',
      name,
      dir,
      manifest,
      store,
      bm25,
      bm25Pool,
      dense,
      modes,
      filters: new FilterCache(store, manifest.corpus.chunks),
      facets: () => (facets ??= store.facets()),
      integrity,
      close: () => {
        for (const c of closers.reverse()) c();
      },
    };
  } catch (err) {
    for (const c of closers.reverse()) c();
    throw err;
  }
}

/**
 * The text phase of a build still running, opened to answer BM25 while its vectors are embedded:
 * the store and BM25 files in the build's own directory, which that phase has finished and synced
 * and nothing writes again but one meta row at the end. No checksums yet (the build computes them
 * at its end, and this process has just written the files); `manifest` is the build's provisional
 * one (no files, no dense arm). A first build's serves `bm25` alone and names the modes to come
 * (`pending`); an update's serves BM25 while the build it replaces (`behind`, not closed with it)
 * serves the other modes.
 */
export function openTextPhase(
  dir: string,
  name: string,
  manifest: Manifest,
  rest: { pending: PendingArms } | { behind: OpenCorpus },
): OpenCorpus {
  const analyzer = createEnglishAnalyzer();
  const hint = fixHintFor(name, manifest);
  checkAnalyzer(dir, manifest, analyzer.id, hint);
  const storePath = join(dir, INDEX_FILES.store);
  const store = new ChunkStore(storePath, hint);
  try {
    const blocksPath = join(dir, INDEX_FILES.blocks);
    const bm25 = new Bm25Searcher({
      ...bm25Files(dir, manifest),
      // the provisional manifest lists no files yet
      ...(existsSync(blocksPath) ? { blocksPath } : {}),
      lookupTerm: (t) => store.lookupTerm(t),
      analyzer,
    });
    let facets: Facets | undefined;
    return {
      kind: 'local',
      name,
      dir,
      manifest,
      store,
      bm25,
      bm25Pool: null,
      dense: null,
      ...('behind' in rest
        ? { modes: rest.behind.modes, behind: rest.behind }
        : { modes: ['bm25'], pending: rest.pending }),
      filters: new FilterCache(store, manifest.corpus.chunks),
      facets: () => (facets ??= store.facets()),
      integrity: Promise.resolve(),
      close: () => {
        bm25.close();
        store.close();
      },
    };
  } catch (err) {
    store.close();
    throw err;
  }
}

function checkAnalyzer(dir: string, manifest: Manifest, analyzerId: string, hint: string): void {
  if (manifest.bm25.analyzer !== analyzerId) {
    throw new RetrieverError(
      'INDEX_INCOMPATIBLE',
      `${dir}: BM25 was built with analyzer "${manifest.bm25.analyzer}" but this server analyzes queries with "${analyzerId}": ${hint}`,
    );
  }
}

/** The store must be of a readable schema, of this manifest's build, and hold its chunks. */
function checkStore(store: ChunkStore, storePath: string, manifest: Manifest, hint: string): void {
  const schema = store.getMeta('schema_version');
  if (!READABLE_STORE_SCHEMAS.some((v) => schema === String(v))) {
    throw new RetrieverError(
      'INDEX_INCOMPATIBLE',
      `${storePath}: store schema ${schema ?? 'none'}, expected ${READABLE_STORE_SCHEMAS.join(' or ')}: ${hint}`,
    );
  }
  const buildId = store.getMeta('build_id');
  if (buildId !== manifest.build_id) {
    throw new RetrieverError(
      'INDEX_CORRUPT',
      `${storePath} belongs to build ${buildId ?? 'none'} but manifest.json to ${manifest.build_id} (files mixed from two builds): ${hint}`,
    );
  }
  const span = store.chunkSpan();
  if (span !== manifest.corpus.chunks) {
    throw new RetrieverError(
      'INDEX_CORRUPT',
      `${storePath} holds ${span} chunks but the manifest says ${manifest.corpus.chunks}: ${hint}`,
    );
  }
}

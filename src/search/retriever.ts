import { describeValue, RetrieverError } from '../errors.js';
import type { ChunkRecord } from '../store/chunk-store.js';
import { fuseHitLists, fuseRrf, type FusedHit, type HitList } from './fuse.js';
import { parseFilter } from './filters.js';
import { ResultCache } from './result-cache.js';
import { TurnQueue } from './turn-queue.js';
import type { OpenCorpus, PendingArms } from './open-corpus.js';
import type { EngineCorpus, ServedCorpus } from './served-corpus.js';
import type { ParsedFilter } from './filters.js';
import type { ScoredHit } from '../core/top-k.js';
import type { AnswerMeter, SearchHit, SearchMode, SearchResult } from './types.js';
import type { ChunkFilter, QueryEncoder } from '../core/contracts.js';
import { own } from '../util/own.js';

export interface RetrieverOptions {
  /** Hits returned when the request names no top_k. */
  topK: number;
  /** Per corpus, hits returned when the request names no top_k (a preset's own, e.g. multihop 4), over `topK`. */
  topKByCorpus?: Readonly<Record<string, number>>;
  maxTopK: number;
  maxQueryChars: number;
  /** Candidates each arm retrieves before fusion (≥ top_k). */
  candidates: number;
  /** RRF k. */
  rrfK: number;
  /** Per-arm RRF weights. */
  weights: { bm25: number; dense: number };
  /** Server-wide default mode; otherwise hybrid where the index has both arms. */
  mode?: SearchMode;
  /** Result LRU entries (0 disables). */
  cacheSize?: number;
  /** Result LRU budget, bytes of heap (0 disables). */
  cacheBytes?: number;
  /** Hears how long each step of a local search took, seconds (a server's stage metrics). */
  onStage?: (stage: SearchStage, seconds: number) => void;
  /**
   * Served without query encoders (`--no-encoder`): the dense arm answers query vectors only, and
   * a text query's default mode is bm25.
   */
  withoutEncoders?: boolean;
}

/** The steps of a local search: the query vectors, each arm, and reading and fusing the hits. */
export type SearchStage = 'encode' | 'bm25' | 'dense' | 'materialize';

export interface SearchRequest {
  query: string;
  topK?: number;
  mode?: SearchMode;
  corpus?: string;
  /** Metadata filter as a client sent it (see filters.ts); both arms apply it before top-k. */
  filter?: unknown;
  /** What the client calls top_k (REST: "topk", "top_n"), for error messages. */
  topKName?: string;
  /** Counts each list's passages before its answer is built (the server's answer memory). */
  meter?: AnswerMeter;
  /**
   * Query vectors computed elsewhere (a trainer's GPU), one per query, for the dense arm instead
   * of the encoder's: checked against the index's dimension and made unit length. With no query
   * text the search is dense only.
   */
  vectors?: readonly (readonly number[])[];
}

/** The one rule for top_k: an integer from 1 to the server's maxTopK (MCP schemas show the same bounds). */
/** The arms a running build has not published yet, of a local corpus. */
export function pendingOf(corpus: ServedCorpus): PendingArms | undefined {
  return corpus.kind === 'local' ? corpus.pending : undefined;
}

/** Where a corpus's dense and hybrid searches run: the build an update in flight replaces, else itself. */
export function denseSide(corpus: ServedCorpus): ServedCorpus {
  return corpus.kind === 'local' && corpus.behind ? corpus.behind : corpus;
}

/** What an answer that named no mode says while the corpus's dense arm is still being built. */
export function noteFor(corpus: ServedCorpus): string | undefined {
  const pending = pendingOf(corpus);
  if (!pending) return undefined;
  return `answered with BM25 alone: the dense arm of corpus ${corpus.name} is still being built (${pending.status()}); hybrid and dense join once it is published`;
}

/** Phrasings of one need a fused search takes (`query` as a list). */
export const MAX_PHRASINGS = 8;
/** How deep each list of a fused search runs before RRF (at least top_k). */
const FUSED_DEPTH = 20;

export function topKBounds(maxTopK: number): { min: number; max: number } {
  return { min: 1, max: maxTopK };
}

/**
 * query → arms → fusion → chunks. Stateless apart from the open corpora, so
 * one instance serves every transport.
 */
export class Retriever {
  private readonly byName: Map<string, ServedCorpus>;
  readonly cache: ResultCache;
  /** Every request's synchronous work, one task a turn (turn-queue.ts). */
  private readonly turns = new TurnQueue();

  /**
   * `encoders` maps a corpus name to the query encoder of its dense arm;
   * corpora built with the same encoder share one instance.
   */
  constructor(
    readonly corpora: readonly ServedCorpus[],
    private readonly encoders: ReadonlyMap<string, QueryEncoder>,
    readonly opts: RetrieverOptions,
  ) {
    if (corpora.length === 0) throw new RetrieverError('BAD_INPUT', 'no corpus to serve: pass --corpus NAME');
    this.byName = new Map(corpora.map((c) => [c.name, c]));
    this.cache = new ResultCache({ maxEntries: opts.cacheSize ?? 0, maxBytes: opts.cacheBytes ?? 0 });
    for (const c of corpora) {
      if (c.manifest.dense && c.modes.includes('dense') && !encoders.has(c.name) && !opts.withoutEncoders) {
        throw new RetrieverError('MODEL', `corpus ${c.name} has a dense index but no query encoder is loaded`);
      }
      if (opts.mode && !c.modes.includes(opts.mode) && !pendingOf(c)?.modes.includes(opts.mode)) {
        throw new RetrieverError(
          'MODE_UNAVAILABLE',
          `--mode ${opts.mode} cannot serve corpus ${c.name}: its index supports ${c.modes.join(', ')} (rebuild without --no-dense for dense/hybrid)`,
        );
      }
    }
  }

  /** Closes every corpus and encoder (each encoder once, however many corpora share it). */
  async close(): Promise<void> {
    await Promise.all(this.corpora.map((c) => c.close()));
    await Promise.all([...new Set(this.encoders.values())].map((e) => e.close?.()));
  }

  /**
   * The same retriever with one corpus replaced by a newer build of it (a folder's update),
   * sharing everything else: the other corpora and the query encoders. The newer build must have
   * been embedded by the same encoder (or have no dense arm); the caller closes the replaced
   * corpus once the requests that hold it are done.
   */
  replacing(corpus: ServedCorpus): Retriever {
    const old = denseSide(this.corpus(corpus.name));
    const encoders = new Map(this.encoders);
    const want = denseSide(corpus).manifest.dense?.encoder.id;
    if (want === undefined) encoders.delete(corpus.name);
    else if (old.manifest.dense?.encoder.id !== want || !this.encoders.has(corpus.name)) {
      throw new RetrieverError(
        'MODEL',
        `the new build of ${corpus.name} was embedded by ${want}, the one served by ${old.manifest.dense?.encoder.id ?? 'no encoder'}: restart the server to load it`,
      );
    }
    return new Retriever(
      this.corpora.map((c) => (c.name === corpus.name ? corpus : c)),
      encoders,
      this.opts,
    );
  }

  /** What each corpus whose build still runs serves and has still to come, e.g. "notes: bm25 ready; dense 43% embedded, …". */
  pendingStatus(): string[] {
    return this.corpora.flatMap((c) => {
      const p = pendingOf(c);
      return p ? [`${c.name}: ${c.modes.join(', ')} ready; ${p.status()}`] : [];
    });
  }

  /** Whether a corpus's text queries can reach its dense arm (its query encoder is loaded). */
  hasEncoder(name: string): boolean {
    return this.encoders.has(name);
  }

  get defaultCorpus(): ServedCorpus {
    return this.corpora[0] as ServedCorpus;
  }

  corpus(name?: string): ServedCorpus {
    if (name === undefined || name === '') return this.defaultCorpus;
    const c = this.byName.get(name);
    if (!c) {
      throw new RetrieverError(
        'UNKNOWN_CORPUS',
        `unknown corpus "${truncate(name, 80)}": this server serves ${[...this.byName.keys()].join(', ')}`,
      );
    }
    return c;
  }

  modeFor(corpus: ServedCorpus, mode?: SearchMode, byVector = false): SearchMode {
    const pending = pendingOf(corpus);
    // a mode asked for by name that a running build has not published yet is refused, never replaced:
    // an RL run must not train on BM25 answers it did not ask for
    if (mode !== undefined && pending?.modes.includes(mode)) {
      throw new RetrieverError(
        'NOT_READY',
        `mode "${mode}" of corpus ${corpus.name} is not ready yet: ${pending.status()}; mode "bm25" answers now`,
      );
    }
    const text = corpus.modes.includes('hybrid') && this.encoders.has(corpus.name) ? 'hybrid' : 'bm25';
    // a default that is still being built falls back to what serves (the answer says so: noteFor)
    const fallback = pending && this.opts.mode !== undefined && pending.modes.includes(this.opts.mode);
    const m = mode ?? (byVector ? 'dense' : fallback ? text : (this.opts.mode ?? text));
    if (!corpus.modes.includes(m)) {
      throw new RetrieverError(
        'MODE_UNAVAILABLE',
        `mode "${m}" is not available for corpus ${corpus.name}: its index was built without a dense index, so only ${corpus.modes.join(', ')} works (rebuild without --no-dense to enable it)`,
      );
    }
    return m;
  }

  /** The top_k a request to `corpus` gets when it names none. */
  defaultTopK(corpus?: string): number {
    return (corpus !== undefined ? own(this.opts.topKByCorpus, corpus) : undefined) ?? this.opts.topK;
  }

  checkTopK(topK: number | undefined, name = 'top_k', corpus?: string): number {
    const k = topK ?? this.defaultTopK(corpus);
    const { min, max } = topKBounds(this.opts.maxTopK);
    if (!Number.isInteger(k) || k < min || k > max) {
      throw new RetrieverError(
        'BAD_INPUT',
        `${name} must be an integer from ${min} to ${max}, got ${describeValue(topK)}`,
      );
    }
    return k;
  }

  /**
   * Query vectors as a client sent them: one per query text (or alone), each a list of finite
   * numbers as long as the corpus's vectors, not all zero; made unit length (the index scores
   * cosines).
   */
  checkVectors(corpus: ServedCorpus, vectors: readonly (readonly number[])[], texts: number): Float32Array[] {
    const dim = corpus.manifest.dense?.encoder.dim;
    if (dim === undefined) {
      throw new RetrieverError('MODE_UNAVAILABLE', `corpus ${corpus.name} has no dense index to search by vector`);
    }
    if (texts > 0 && vectors.length !== texts) {
      throw new RetrieverError(
        'BAD_INPUT',
        `${vectors.length} query vectors for ${texts} queries: send one vector per query, in the same order`,
      );
    }
    if (vectors.length === 0) throw new RetrieverError('BAD_INPUT', 'no query vector: send at least one');
    return vectors.map((v, i) => {
      if (!Array.isArray(v) || v.length !== dim) {
        throw new RetrieverError(
          'BAD_INPUT',
          `query vector ${i} has ${Array.isArray(v) ? v.length : 'no'} dimensions; corpus ${corpus.name}'s vectors have ${dim} (${corpus.manifest.dense?.encoder.model})`,
        );
      }
      const out = new Float32Array(dim);
      let s = 0;
      for (let d = 0; d < dim; d++) {
        const x = v[d];
        if (typeof x !== 'number' || !Number.isFinite(x))
          throw new RetrieverError('BAD_INPUT', `query vector ${i} holds ${describeValue(x)} at ${d}: numbers only`);
        out[d] = x;
        s += x * x;
      }
      if (s === 0) throw new RetrieverError('BAD_INPUT', `query vector ${i} is all zeros: it has no direction`);
      const norm = Math.sqrt(s);
      for (let d = 0; d < dim; d++) out[d] = (out[d] as number) / norm;
      return out;
    });
  }

  checkQuery(query: unknown): string {
    if (typeof query !== 'string') throw new RetrieverError('BAD_INPUT', 'query must be a string');
    if (query.trim() === '') throw new RetrieverError('BAD_INPUT', 'query is empty: send the words to search for');
    if (query.length > this.opts.maxQueryChars) {
      throw new RetrieverError(
        'BAD_INPUT',
        `query is ${query.length} characters; the limit is ${this.opts.maxQueryChars}: shorten it`,
      );
    }
    return query;
  }

  async search(req: SearchRequest): Promise<SearchResult> {
    const [res] = await this.searchMany(req.query === '' && req.vectors ? [] : [req.query], req);
    return res as SearchResult;
  }

  /**
   * Several queries against one corpus; query vectors are computed in one encoder batch (or
   * given: `req.vectors`, with or without the queries' text).
   */
  async searchMany(queries: readonly string[], req: Omit<SearchRequest, 'query'>): Promise<SearchResult[]> {
    const named = this.corpus(req.corpus);
    const given = req.vectors ? this.checkVectors(denseSide(named), req.vectors, queries.length) : undefined;
    const mode = this.modeFor(named, req.mode, given !== undefined && queries.length === 0);
    // a folder's update in flight: BM25 on its text phase, the other modes on the build it replaces
    const corpus = mode === 'bm25' ? named : denseSide(named);
    if (given && queries.length === 0 && mode !== 'dense') {
      throw new RetrieverError(
        'BAD_INPUT',
        `mode "${mode}" needs the query text too (BM25 reads words): send the queries beside their vectors, or use mode dense`,
      );
    }
    if (!given && mode !== 'bm25' && corpus.kind === 'local' && !this.encoders.has(corpus.name)) {
      throw new RetrieverError(
        'MODEL',
        `corpus ${corpus.name} is served without its query encoder (--no-encoder): send query vectors (query_vectors on /retrieve, query_vector on search) for dense or hybrid, or use mode bm25`,
      );
    }
    const topK = this.checkTopK(req.topK, req.topKName, corpus.name);
    const texts = given && queries.length === 0 ? given.map(() => '') : queries.map((q) => this.checkQuery(q));
    const parsed = parseFilter(req.filter);
    // a query given as a vector is not cached: its key would be the vector
    const keys = texts.map((q) => (given ? '' : ResultCache.key(corpus.name, mode, topK, parsed?.key ?? '', q)));
    const out: Array<SearchResult | undefined> = keys.map((k) => (given ? undefined : this.cache.get(k)));
    const todo = texts.map((_, i) => i).filter((i) => out[i] === undefined);
    // what the cache already holds is counted at once; fresh lists as each is read
    for (const res of out) if (res) meterResult(req.meter, res.results);
    if (todo.length > 0) {
      const batch = todo.map((i) => texts[i] as string);
      const vecs = given ? todo.map((i) => given[i] as Float32Array) : undefined;
      const fresh =
        corpus.kind === 'engine'
          ? await this.computeOnEngine(corpus, mode, topK, batch, parsed, req.meter, vecs)
          : await this.compute(
              corpus,
              mode,
              topK,
              batch,
              parsed ? corpus.filters.resolve(parsed) : undefined,
              req.meter,
              vecs,
            );
      todo.forEach((i, j) => {
        out[i] = fresh[j];
        if (!given) this.cache.set(keys[i] as string, fresh[j] as SearchResult);
      });
    }
    const note = req.mode === undefined ? noteFor(named) : undefined;
    return note ? (out as SearchResult[]).map((r) => ({ ...r, note })) : (out as SearchResult[]);
  }

  /**
   * One need searched several ways and fused: each phrasing in `queries` (keywords and a
   * question, say; up to MAX_PHRASINGS) against each corpus (names, or every served one for
   * "*"), each as `searchMany` runs it (both arms fused per corpus), and the lists fused by RRF
   * into one ranking whose hits name their corpus. qmd searches every collection by default;
   * an agent that cannot tell which corpus holds the answer asks them all at once.
   */
  async searchFused(
    queries: readonly string[],
    corpora: readonly string[] | '*',
    req: Omit<SearchRequest, 'query' | 'corpus' | 'vectors'>,
  ): Promise<SearchResult> {
    if (queries.length === 0 || queries.length > MAX_PHRASINGS) {
      throw new RetrieverError(
        'BAD_INPUT',
        `query takes 1 to ${MAX_PHRASINGS} phrasings of one need; ${queries.length} were given: send the others as separate searches`,
      );
    }
    const names = corpora === '*' ? this.corpora.map((c) => c.name) : [...new Set(corpora)];
    if (names.length === 0)
      throw new RetrieverError('BAD_INPUT', 'corpus is an empty list: name one or more, or "*" for all');
    const served = names.map((n) => this.corpus(n));
    const single = served.length === 1 ? served[0]?.name : undefined;
    const topK = this.checkTopK(req.topK, req.topKName, single);
    // each list runs deeper than top_k: a hit ranked low by one phrasing may lead once fused
    const depth = Math.min(this.opts.maxTopK, Math.max(topK, FUSED_DEPTH));
    const lists: Array<HitList<SearchHit>> = [];
    const notes = new Set<string>();
    let mode: SearchMode | undefined;
    for (const c of served) {
      const res = await this.searchMany(queries, { ...req, topK: depth, corpus: c.name });
      for (const r of res) {
        lists.push({ corpus: c.name, hits: r.results });
        mode ??= r.mode;
        if (r.note) notes.add(r.note);
      }
    }
    const fused = fuseHitLists(lists, this.opts.rrfK, topK);
    const results = fused.map(({ corpus, hit, score }, i) => ({ ...hit, rank: i + 1, score, corpus }));
    return {
      corpus: corpora === '*' ? '*' : names.join(','),
      mode: mode ?? this.modeFor(served[0] as ServedCorpus, req.mode),
      results,
      ...(notes.size > 0 ? { note: [...notes].join('; ') } : {}),
    };
  }

  private async compute(
    corpus: OpenCorpus,
    mode: SearchMode,
    topK: number,
    texts: string[],
    filter: ChunkFilter | undefined,
    meter: AnswerMeter | undefined,
    given?: Float32Array[],
  ): Promise<SearchResult[]> {
    const depth = this.depthFor(mode, topK);
    const timed = this.timer();
    const vectors =
      mode === 'bm25' ? null : given ? Promise.resolve(given) : timed('encode', this.embed(corpus, texts));
    // the BM25 arm runs while the encoder thread works on the query vectors; with BM25 threads,
    // each thread scores its part of the chunk range while this thread scores the first part and
    // then walks the HNSW graph (filtered searches stay here: the filter's bitset is not shared)
    const bm25 = mode === 'dense' ? null : timed('bm25', searchBm25(this.turns, corpus, texts, depth, filter));
    // the BM25 arm may fail while the query vectors are still awaited: mark its rejection as
    // handled now (it is awaited, and thrown, below), or it would end the process unseen
    bm25?.catch(() => undefined);
    let denseLists: ScoredHit[][] | null = null;
    try {
      const vecs = vectors ? await vectors : null;
      const dense = corpus.dense;
      // a slice of a batch walks the ANN graph on every core at once, one slice a turn
      if (vecs && dense) {
        denseLists = [];
        const t = performance.now();
        for (let i = 0; i < vecs.length; i += DENSE_SLICE) {
          const part = vecs.slice(i, i + DENSE_SLICE);
          denseLists.push(...(await this.turns.run(() => dense.searchMany(part, depth, filter))));
        }
        this.opts.onStage?.('dense', (performance.now() - t) / 1000);
      }
    } catch (err) {
      await bm25?.catch(() => undefined); // leave nothing running (or rejecting unseen) behind a failed request
      throw err;
    }
    const bm25Lists = bm25 ? await bm25 : null;
    const out: SearchResult[] = [];
    for (let i = 0; i < texts.length; i++) {
      const lists = this.armLists(bm25Lists?.[i], denseLists?.[i]);
      // reading the chunks is a turn of its own: a top-100 list of long passages takes milliseconds
      const results = await this.turns.run(() => {
        const t = performance.now();
        const hits = this.materialize(corpus, mode, lists, topK);
        this.opts.onStage?.('materialize', (performance.now() - t) / 1000);
        // counted before the next list is read: past the budget, the request fails holding one list
        meterResult(meter, hits);
        return hits;
      });
      out.push({ corpus: corpus.name, mode, results, ...(filter ? { filter_matches: filter.nums.length } : {}) });
    }
    return out;
  }

  /**
   * The same request on a corpus in a search engine: the engine runs both
   * arms (filters inside each), and the hits are fused here with the same RRF
   * and tie-break as local hits.
   */
  private async computeOnEngine(
    corpus: EngineCorpus,
    mode: SearchMode,
    topK: number,
    texts: string[],
    filter: ParsedFilter | undefined,
    meter: AnswerMeter | undefined,
    given?: Float32Array[],
  ): Promise<SearchResult[]> {
    const depth = this.depthFor(mode, topK);
    const vectors = mode === 'bm25' ? null : (given ?? (await this.embed(corpus, texts)));
    const arms: Array<'bm25' | 'dense'> = mode === 'hybrid' ? ['bm25', 'dense'] : [mode];
    const answers = await Promise.all(
      texts.map((text, i) =>
        corpus.searchArms({ text, vector: vectors ? (vectors[i] as Float32Array) : null, arms, depth, filter }),
      ),
    );
    return answers.map((a) => {
      const lists = this.armLists(a.bm25, a.dense);
      const results = this.fuse(mode, lists, topK, (num) => a.records.get(num)?.id ?? '').map((f, i) => {
        const rec = a.records.get(f.num);
        if (!rec) throw new RetrieverError('ENGINE', `the engine returned chunk ${f.num} without its record`);
        return toHit(rec, i + 1, f);
      });
      meterResult(meter, results);
      return {
        corpus: corpus.name,
        mode,
        results,
        ...(a.filterMatches !== undefined ? { filter_matches: a.filterMatches } : {}),
      };
    });
  }

  /** Wraps a step's promise so that its duration from now is heard by onStage (when set). */
  private timer(): <T>(stage: SearchStage, p: Promise<T>) => Promise<T> {
    const onStage = this.opts.onStage;
    if (!onStage) return (_stage, p) => p;
    const t0 = performance.now();
    return (stage, p) => p.then((v) => (onStage(stage, (performance.now() - t0) / 1000), v));
  }

  /** Runs other synchronous work of a request (serialising a large answer) in the same turns as searches. */
  inTurn<T extends object | string | number | boolean | null | undefined>(work: () => T): Promise<T> {
    return this.turns.run(work);
  }

  /** Starts a new request's handling in its turn, after the steps of those already started (TurnQueue.admit). */
  admitInTurn<T extends object | string | number | boolean | null | undefined>(work: () => T): Promise<T> {
    return this.turns.admit(work);
  }

  /** Query vectors from a corpus's query encoder (e.g. for `eval --ann-recall`). */
  embedQueries(corpusName: string, texts: string[]): Promise<Float32Array[]> {
    return this.embed(this.corpus(corpusName), texts);
  }

  private embed(corpus: ServedCorpus, texts: string[]): Promise<Float32Array[]> {
    const encoder = this.encoders.get(corpus.name);
    if (!encoder)
      return Promise.reject(new RetrieverError('MODEL', `no query encoder is loaded for corpus ${corpus.name}`));
    return encoder.embedQueries(texts);
  }

  private materialize(corpus: OpenCorpus, mode: SearchMode, lists: ArmList[], topK: number): SearchHit[] {
    const fused = this.fuse(mode, lists, topK, (num) => corpus.store.getChunkId(num) ?? '');
    return fused.map((f, i) => {
      const rec = corpus.store.getChunk(f.num);
      if (!rec) throw new RetrieverError('INDEX_CORRUPT', `chunk ${f.num} is missing from ${corpus.store.path}`);
      return toHit(rec, i + 1, f);
    });
  }

  /** Hits each arm retrieves: fusion candidates for hybrid, else just top_k. */
  private depthFor(mode: SearchMode, topK: number): number {
    return mode === 'hybrid' ? Math.max(this.opts.candidates, topK) : topK;
  }

  /** The lists that answered, each with its arm name and RRF weight, BM25 first (the fixed summing order). */
  private armLists(bm25: ScoredHit[] | undefined, dense: ScoredHit[] | undefined): ArmList[] {
    const lists: ArmList[] = [];
    if (bm25) lists.push({ arm: 'bm25', hits: bm25, weight: this.opts.weights.bm25 });
    if (dense) lists.push({ arm: 'dense', hits: dense, weight: this.opts.weights.dense });
    return lists;
  }

  /** RRF over the arms for hybrid; otherwise the one arm's list cut to top_k. Ties break on chunk id. */
  private fuse(mode: SearchMode, lists: ArmList[], topK: number, idOf: (num: number) => string): FusedHit[] {
    if (mode === 'hybrid') return fuseRrf(lists, { k: this.opts.rrfK, topK, idOf });
    const list = lists[0] as { arm: string; hits: ScoredHit[] };
    return list.hits.slice(0, topK).map((h, i) => ({
      num: h.num,
      score: h.score,
      ranks: { [list.arm]: i + 1 },
      scores: { [list.arm]: h.score },
    }));
  }
}

/** Counts a list's passages on the meter: their stored text and title, UTF-16 units as bytes. */
function meterResult(meter: AnswerMeter | undefined, hits: readonly SearchHit[]): void {
  if (!meter) return;
  let bytes = 0;
  for (const h of hits) bytes += h.contents.length + h.title.length;
  meter(bytes, hits.length);
}

function toHit(rec: ChunkRecord, rank: number, f: FusedHit): SearchHit {
  const hit: SearchHit = {
    rank,
    id: rec.id,
    doc_id: rec.docId,
    title: rec.title,
    text: rec.text,
    contents: rec.contents,
    score: f.score,
  };
  if (f.ranks['bm25'] !== undefined) {
    hit.bm25_score = f.scores['bm25'] as number;
    hit.bm25_rank = f.ranks['bm25'];
  }
  if (f.ranks['dense'] !== undefined) {
    hit.dense_score = f.scores['dense'] as number;
    hit.dense_rank = f.ranks['dense'];
  }
  if (rec.metadata) hit.metadata = rec.metadata;
  return hit;
}

/** One arm's hits for fusion. */
interface ArmList {
  arm: string;
  hits: ScoredHit[];
  weight: number;
}

/** Query vectors per HNSW batch walk, one walk a turn. */
const DENSE_SLICE = 32;

/**
 * The BM25 lists of a batch, one query a turn (RELIABILITY.md "Event loop"):
 * the main thread's part of each query runs in its turn, the worker threads'
 * parts meanwhile, and the lists are awaited together.
 */
async function searchBm25(
  turns: TurnQueue,
  corpus: OpenCorpus,
  texts: readonly string[],
  depth: number,
  filter: ChunkFilter | undefined,
): Promise<ScoredHit[][]> {
  const pool = filter ? null : corpus.bm25Pool;
  const lists: Array<Promise<ScoredHit[]> | ScoredHit[]> = [];
  try {
    for (const q of texts) {
      // wrapped: the turn ends when the main thread's part is done, not when the workers' parts are
      const { list } = await turns.run(() => ({
        list: pool ? pool.search(q, depth) : corpus.bm25.search(q, depth, filter),
      }));
      // a worker's part may fail while later queries take their turns: handled here, thrown by Promise.all
      if (list instanceof Promise) list.catch(() => undefined);
      lists.push(list);
    }
  } catch (err) {
    await Promise.allSettled(lists); // leave no worker part running behind a failed request
    throw err;
  }
  return Promise.all(lists);
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

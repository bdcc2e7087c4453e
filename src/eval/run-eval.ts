import { localOnly } from '../search/served-corpus.js';
import type { Retriever } from '../search/retriever.js';
import type { SearchHit, SearchMode } from '../search/types.js';
import { createEnglishAnalyzer } from '../text/analyzer.js';
import { createProgress } from '../util/progress.js';
import { mean, mrrAtK, ndcgAtK, ndcgBinary, recallAtK, type Relevance } from './metrics.js';
import type { EvalQuery } from './queries.js';

export interface EvalOptions {
  retriever: Retriever;
  corpus: string;
  modes: SearchMode[];
  ks: number[];
  /** GraphRAG-Bench: share of the evidence's terms a chunk must contain to count. */
  evidenceThreshold: number;
  progress: boolean;
  /**
   * The chunk texts that evidence is matched against; by default the
   * corpus's own store. A corpus served from an engine is judged against the
   * local store it was pushed from.
   */
  judgeStore?: { contentsRange(from: number, to: number): string[] };
  /** Also score nDCG at every k of `ks` (the curves of `eval --html`). */
  curves?: boolean;
}

/** Per mode, each query's scores and ranked hits (what `eval --html` shows). */
export interface EvalDetails {
  queries: readonly EvalQuery[];
  modes: Map<string, { scores: QueryScore[]; lists: SearchHit[][] }>;
  /** Whether a hit counts as relevant for query i (the judge's own rule). */
  relevant(i: number, hit: SearchHit): boolean;
}

export interface EvalRow {
  /** A search mode, or a label of a bench's own. */
  mode: string;
  type: string;
  queries: number;
  skipped: number;
  metrics: Record<string, number>;
}

export interface QueryScore {
  type: string;
  skipped: boolean;
  metrics: Record<string, number>;
}

const BATCH = 64;

/**
 * Runs every query through Retriever.searchMany — the server's own search
 * path — for each mode, and scores the ranked chunks with the query's judge.
 * Document-level judges (BEIR qrels, MultiHop-RAG articles) rank documents
 * by their first chunk, so deeper chunk lists are fetched for them.
 */
export async function runEval(queries: EvalQuery[], opts: EvalOptions): Promise<EvalRow[]> {
  return (await runEvalDetailed(queries, opts)).rows;
}

/** runEval, keeping each query's scores and hit lists per mode. */
export async function runEvalDetailed(
  queries: EvalQuery[],
  opts: EvalOptions,
): Promise<{ rows: EvalRow[]; details: EvalDetails }> {
  const corpus = opts.retriever.corpus(opts.corpus);
  const maxK = Math.max(10, ...opts.ks);
  const docLevel = queries.some((q) => q.judge.kind === 'docs' || q.judge.kind === 'titles');
  const chunked = corpus.manifest.corpus.chunks > corpus.manifest.corpus.documents;
  const depth = Math.min(opts.retriever.opts.maxTopK, docLevel && chunked ? maxK * 5 : maxK);
  const store = opts.judgeStore ?? localOnly(corpus, 'eval').store;
  const judging = new Judging(store, corpus.manifest.corpus.chunks, opts);
  const rows: EvalRow[] = [];
  const details: EvalDetails = {
    queries,
    modes: new Map(),
    relevant: (i, hit) => judging.relevant(queries[i] as EvalQuery, hit),
  };
  for (const mode of opts.modes) {
    const progress = createProgress({
      label: `eval ${opts.corpus} ${mode}`,
      total: queries.length,
      unit: 'queries',
      enabled: opts.progress,
    });
    const lists: SearchHit[][] = [];
    try {
      for (let i = 0; i < queries.length; i += BATCH) {
        const batch = queries.slice(i, i + BATCH);
        const res = await opts.retriever.searchMany(
          batch.map((q) => q.text),
          { topK: depth, mode, corpus: opts.corpus },
        );
        for (const r of res) lists.push((r as { results: SearchHit[] }).results);
        progress.update(lists.length);
      }
      progress.finish();
    } finally {
      progress.close();
    }
    const scores = queries.map((q, i) => judging.score(q, lists[i] ?? []));
    details.modes.set(mode, { scores, lists });
    rows.push(...aggregate(mode, scores));
  }
  return { rows, details };
}

/** Scores ranked hit lists against their queries' judges; reusable across many lists of the same queries. */
export interface ListJudge {
  rows(mode: string, queries: readonly EvalQuery[], lists: readonly SearchHit[][]): EvalRow[];
}

export function createJudge(
  store: { contentsRange(from: number, to: number): string[] },
  chunkCount: number,
  opts: JudgeOptions,
): ListJudge {
  const judging = new Judging(store, chunkCount, opts);
  return {
    rows: (mode, queries, lists) =>
      aggregate(
        mode,
        queries.map((q, i) => judging.score(q, lists[i] ?? [])),
      ),
  };
}

function aggregate(mode: string, scores: QueryScore[]): EvalRow[] {
  const types = ['all', ...new Set(scores.map((s) => s.type).filter((t) => t !== 'all'))];
  return types
    .map((type) => {
      const mine = scores.filter((s) => type === 'all' || s.type === type);
      const used = mine.filter((s) => !s.skipped);
      const names = [...new Set(used.flatMap((s) => Object.keys(s.metrics)))];
      const metrics: Record<string, number> = {};
      for (const n of names) {
        const vals = used.map((s) => s.metrics[n]).filter((v): v is number => v !== undefined);
        metrics[n] = mean(vals);
      }
      return { mode, type, queries: used.length, skipped: mine.length - used.length, metrics };
    })
    .filter((r) => r.type === 'all' || r.queries > 0);
}

type JudgeOptions = Pick<EvalOptions, 'ks' | 'evidenceThreshold' | 'curves'>;

class Judging {
  private readonly analyzer = createEnglishAnalyzer();
  private chunkTerms: Array<Set<string>> | undefined;
  private readonly hitTerms = new Map<string, Set<string>>();
  private readonly evidenceMemo = new Map<string, { ev: Set<string>; relevantInCorpus: number }>();

  constructor(
    private readonly store: { contentsRange(from: number, to: number): string[] },
    private readonly chunkCount: number,
    private readonly opts: JudgeOptions,
  ) {}

  /** The judge's own rule for one hit: a relevant document or title, an answer in its text, enough evidence. */
  relevant(q: EvalQuery, h: SearchHit): boolean {
    const j = q.judge;
    if (j.kind === 'docs') return (j.grades.get(h.doc_id) ?? 0) > 0;
    if (j.kind === 'titles') return j.titles.has(h.title);
    if (j.kind === 'answers') {
      if (j.supportingIds?.has(h.doc_id)) return true;
      const text = ` ${normalizeAnswer(h.contents)} `;
      return j.answers.map(normalizeAnswer).some((a) => a !== '' && text.includes(` ${a} `));
    }
    const { ev } = this.evidenceFacts(j.text);
    if (ev.size === 0) return false;
    let n = 0;
    const terms = this.termsOf(h);
    for (const t of ev) if (terms.has(t)) n++;
    return n / ev.size >= this.opts.evidenceThreshold;
  }

  score(q: EvalQuery, hits: SearchHit[]): QueryScore {
    const j = q.judge;
    if (j.kind === 'docs') return this.ranked(q, uniq(hits.map((h) => h.doc_id).filter((d) => d !== q.id)), j.grades);
    if (j.kind === 'titles') {
      const titles = new Set([...j.titles].filter((t) => t !== ''));
      if (titles.size === 0) return { type: q.type, skipped: true, metrics: {} };
      return this.ranked(q, uniq(hits.map((h) => h.title)), new Map([...titles].map((t) => [t, 1])));
    }
    if (j.kind === 'answers') return this.answers(q, hits, j.answers, j.supportingIds);
    return this.evidence(q, hits, j.text);
  }

  private ranked(q: EvalQuery, ranked: string[], rel: Relevance): QueryScore {
    const metrics: Record<string, number> = {};
    for (const k of this.opts.ks) metrics[`R@${k}`] = recallAtK(ranked, rel, k);
    metrics['MRR@10'] = mrrAtK(ranked, rel, 10);
    metrics['nDCG@10'] = ndcgAtK(ranked, rel, 10);
    if (this.opts.curves) for (const k of this.opts.ks) metrics[`nDCG@${k}`] = ndcgAtK(ranked, rel, k);
    return { type: q.type, skipped: false, metrics };
  }

  private answers(q: EvalQuery, hits: SearchHit[], answers: string[], ids?: Set<string>): QueryScore {
    const base = ids
      ? this.ranked(q, uniq(hits.map((h) => h.doc_id)), new Map([...ids].map((id) => [id, 1])))
      : undefined;
    const metrics = base?.metrics ?? {};
    const norm = answers.map(normalizeAnswer).filter((a) => a !== '');
    const found = hits.map((h) => {
      const text = ` ${normalizeAnswer(h.contents)} `;
      return norm.some((a) => text.includes(` ${a} `));
    });
    // a question with no answer string has no answer@k (not 0: a report of 0.0000 columns said
    // every search failed, where the query file simply gave no answers)
    if (norm.length > 0) for (const k of this.opts.ks) metrics[`answer@${k}`] = found.slice(0, k).some(Boolean) ? 1 : 0;
    return { type: q.type, skipped: norm.length === 0 && !base, metrics };
  }

  /** GraphRAG-Bench evidence is paraphrased, so "contains" means term coverage ≥ τ. */
  private evidence(q: EvalQuery, hits: SearchHit[], text: string): QueryScore {
    const { ev, relevantInCorpus } = this.evidenceFacts(text);
    if (ev.size === 0) return { type: q.type, skipped: true, metrics: {} };
    const cover = (terms: Set<string>): number => {
      let n = 0;
      for (const t of ev) if (terms.has(t)) n++;
      return n / ev.size;
    };
    const hitTerms = hits.map((h) => this.termsOf(h));
    const metrics: Record<string, number> = {};
    const union = new Set<string>();
    hitTerms.forEach((terms, i) => {
      for (const t of terms) union.add(t);
      for (const k of this.opts.ks) if (i + 1 === Math.min(k, hitTerms.length)) metrics[`cov@${k}`] = cover(union);
    });
    for (const k of this.opts.ks) metrics[`cov@${k}`] ??= hitTerms.length === 0 ? 0 : cover(union);
    // how many chunks of the whole corpus count as containing the evidence
    metrics['unanswerable'] = relevantInCorpus > 0 ? 0 : 1;
    if (relevantInCorpus > 0) {
      const flags = hitTerms.map((t) => cover(t) >= this.opts.evidenceThreshold);
      for (const k of this.opts.ks) metrics[`R@${k}`] = flags.slice(0, k).some(Boolean) ? 1 : 0;
      const first = flags.slice(0, 10).indexOf(true);
      metrics['MRR@10'] = first < 0 ? 0 : 1 / (first + 1);
      metrics['nDCG@10'] = ndcgBinary(flags, relevantInCorpus, 10);
      if (this.opts.curves) for (const k of this.opts.ks) metrics[`nDCG@${k}`] = ndcgBinary(flags, relevantInCorpus, k);
    }
    return { type: q.type, skipped: false, metrics };
  }

  /** An evidence text's terms and how many chunks of the corpus contain it: per text, since a scan reads every chunk. */
  private evidenceFacts(text: string): { ev: Set<string>; relevantInCorpus: number } {
    let f = this.evidenceMemo.get(text);
    if (!f) {
      const ev = new Set(this.analyzer.analyze(text));
      const covers = (terms: Set<string>): boolean => {
        let n = 0;
        for (const t of ev) if (terms.has(t)) n++;
        return n / ev.size >= this.opts.evidenceThreshold;
      };
      f = { ev, relevantInCorpus: ev.size === 0 ? 0 : this.corpusTerms().filter(covers).length };
      this.evidenceMemo.set(text, f);
    }
    return f;
  }

  /** A hit's analysed terms, kept per chunk id: the same chunks come back for many queries. */
  private termsOf(h: SearchHit): Set<string> {
    let t = this.hitTerms.get(h.id);
    if (!t) {
      t = new Set(this.analyzer.analyze(h.contents));
      this.hitTerms.set(h.id, t);
    }
    return t;
  }

  private corpusTerms(): Array<Set<string>> {
    if (!this.chunkTerms) {
      const out: Array<Set<string>> = [];
      for (let i = 0; i < this.chunkCount; i += 1000) {
        for (const c of this.store.contentsRange(i, Math.min(this.chunkCount, i + 1000)))
          out.push(new Set(this.analyzer.analyze(c)));
      }
      this.chunkTerms = out;
    }
    return this.chunkTerms;
  }
}

function uniq(xs: string[]): string[] {
  return [...new Set(xs)];
}

/** SQuAD-style normalisation, as FlashRAG/Search-R1 answer matching uses. */
export function normalizeAnswer(s: string): string {
  return s
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[\p{P}\p{S}]/gu, ' ')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

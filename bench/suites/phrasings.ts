/**
 * Several phrasings of one need (issue 57): does a search that sends a question together with
 * its keywords (`query` as a list, each phrasing searched in both arms, fused by RRF:
 * Retriever.searchFused) find more than the question alone, or the keywords alone? On 2Wiki
 * (HotpotQA-style multi-hop questions, gold paragraphs) and the MultiHop-RAG surrogate (real
 * questions, a corpus of only the evidence sentences: easier than the real one), hybrid with a
 * real e5-small-v2, recall@5 and @10 of the gold passages.
 *
 * The keywords are what an agent's keyword query looks like, made the same way for every
 * question: the question's words without stop words and question words, in order.
 *
 *   npm run bench -- phrasings [--model e5-small-v2] [--datasets 2wiki,multihop]
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadQueries } from '../../src/eval/queries.js';
import { createJudge } from '../../src/eval/run-eval.js';
import type { SearchHit } from '../../src/search/types.js';
import { arg, BENCH_DATA, printTable, ROOT, writeResult } from '../lib/common.js';
import { DATASETS } from '../lib/datasets.js';
import { fetchRealModel, modelFetchOptions, variantArgs } from '../../scripts/models/real-models.js';
import { benchRetriever, openBenchCorpus, openManifestEncoder } from '../lib/retriever.js';

const model = arg('model', 'e5-small-v2') as string;
const names = (arg('datasets', '2wiki,multihop') as string).split(',');
const log = (line: string): void => void process.stderr.write(`${line}\n`);
const KS = [5, 10];

const STOP = new Set(
  (
    'a an the of in on at to for from by with and or but is are was were be been being do does did ' +
    'has have had what which who whom whose when where why how that this these those it its their ' +
    'there than then as into about over after before between both either more most same other ' +
    'any each if not no nor only own so such too very can will would should could may might ' +
    'whether also one ones his her he she they them we you i me my our your'
  ).split(' '),
);

/** The question's content words, in order: what an agent writes as a keyword query. */
export function keywordsOf(question: string): string {
  const words = question.match(/[\p{L}\p{N}][\p{L}\p{N}'’.-]*/gu) ?? [];
  const kept = words.filter((w) => !STOP.has(w.toLowerCase().replace(/['’]s$/, '')));
  return (kept.length > 0 ? kept : words).join(' ');
}

const dir = await fetchRealModel(model, modelFetchOptions(log));
const indexDir = join(BENCH_DATA, 'real-indexes', model);
const rows: Array<Record<string, string | number>> = [];
for (const d of DATASETS.filter((x) => names.includes(x.name))) {
  if (!existsSync(join(indexDir, d.name, 'manifest.json'))) {
    log(`${model} / ${d.name}: building`);
    execFileSync(
      'node',
      [
        join(ROOT, 'bin/build-index.js'),
        ...['--name', d.name, '--input', d.input, '--format', d.format],
        ...['--index-dir', indexDir, '--model-path', dir, ...variantArgs(model), '--no-progress'],
      ],
      { stdio: ['ignore', 2, 2] },
    );
  }
  const corpus = openBenchCorpus(indexDir, d.name);
  const encoder = await openManifestEncoder(corpus.manifest.dense!);
  try {
    const retriever = benchRetriever(corpus, encoder, 10);
    const queries = await loadQueries(d.queryFormat, d.queries);
    const judge = createJudge(corpus.store, corpus.manifest.corpus.chunks, { ks: KS, evidenceThreshold: 0.7 });
    const lists: Record<string, SearchHit[][]> = { question: [], keywords: [], 'question + keywords': [] };
    for (const q of queries) {
      const kw = keywordsOf(q.text);
      const one = async (text: string): Promise<SearchHit[]> =>
        (await retriever.search({ query: text, topK: 10, mode: 'hybrid', corpus: d.name })).results;
      lists['question']!.push(await one(q.text));
      lists['keywords']!.push(await one(kw));
      lists['question + keywords']!.push(
        (await retriever.searchFused([q.text, kw], [d.name], { topK: 10, mode: 'hybrid' })).results,
      );
    }
    for (const [how, ls] of Object.entries(lists)) {
      const r = judge.rows(how, queries, ls)[0]!;
      rows.push({
        dataset: d.name === 'multihop' ? 'multihop (surrogate)' : d.name,
        queries: queries.length,
        query: how,
        'R@5': r.metrics['R@5'] ?? NaN,
        'R@10': r.metrics['R@10'] ?? NaN,
      });
    }
    log(`${d.name}: done (${queries.length} questions)`);
  } finally {
    await encoder.close();
    corpus.close();
  }
}
printTable(`A question, its keywords, and both fused (hybrid, ${model})`, rows);
writeResult('phrasings', {
  model,
  keywords: 'the question without stop words and question words (bench/suites/phrasings.ts keywordsOf)',
  rows,
});

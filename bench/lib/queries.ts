import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED } from './common.js';

/** Real questions from the shared benchmarks: the query load for latency figures. */
export function loadRealQuestions(): string[] {
  const out: string[] = [];
  const wiki = join(SHARED, 'data/2wiki-200/queries.jsonl');
  if (existsSync(wiki)) {
    for (const l of readFileSync(wiki, 'utf8').trim().split('\n'))
      out.push((JSON.parse(l) as { question: string }).question);
  }
  const mh = join(SHARED, 'data/multihop-rag/MultiHopRAG.surrogate.json');
  if (existsSync(mh))
    for (const q of JSON.parse(readFileSync(mh, 'utf8')) as Array<{ query: string }>) out.push(q.query);
  for (const f of ['medical_questions.json', 'novel_questions.json']) {
    const p = join(SHARED, 'data/graphrag-bench', f);
    if (existsSync(p))
      for (const q of JSON.parse(readFileSync(p, 'utf8')) as Array<{ question: string }>) out.push(q.question);
  }
  if (out.length === 0) throw new Error(`no questions found under ${SHARED}; set RETRIEVER_MCP_SHARED`);
  return out;
}

/** 2WikiMultiHopQA-200 from ../shared: the wiki-18 file, its passages' text and its questions. */
export function load2Wiki(): { corpusFile: string; passages: string[]; questions: string[] } {
  const lines = (path: string): string[] =>
    readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
  const corpusFile = join(SHARED, 'data/2wiki-200/corpus.jsonl');
  return {
    corpusFile,
    passages: lines(corpusFile).map((l) => (JSON.parse(l) as { contents: string }).contents),
    questions: lines(join(SHARED, 'data/2wiki-200/queries.jsonl')).map(
      (l) => (JSON.parse(l) as { question: string }).question,
    ),
  };
}

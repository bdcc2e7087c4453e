import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { RetrieverError } from '../errors.js';
import { readLines } from '../ingest/lines.js';
import { readJsonValues } from '../ingest/json-values.js';

/**
 * Evaluation queries with their gold labels, from each benchmark's own files.
 * A judge says which retrieved chunks count as relevant:
 *   docs      — BEIR qrels (graded, by document id);
 *   titles    — MultiHop-RAG evidence_list (a chunk from an evidence article);
 *   evidence  — GraphRAG-Bench evidence text (a chunk that covers the evidence);
 *   answers   — FlashRAG golden_answers (a chunk that contains an answer string),
 *               with supporting_ids scored as documents when present.
 */
export const EVAL_FORMATS = ['flashrag', 'beir', 'multihop', 'graphrag'] as const;
export type EvalFormat = (typeof EVAL_FORMATS)[number];

export type Judge =
  | { kind: 'docs'; grades: Map<string, number> }
  | { kind: 'titles'; titles: Set<string> }
  | { kind: 'evidence'; text: string }
  | { kind: 'answers'; answers: string[]; supportingIds?: Set<string> };

export interface EvalQuery {
  id: string;
  text: string;
  type: string;
  judge: Judge;
}

export async function loadQueries(format: EvalFormat, path: string, qrelsPath?: string): Promise<EvalQuery[]> {
  switch (format) {
    case 'flashrag':
      return loadFlashrag(path);
    case 'beir':
      return loadBeir(path, qrelsPath ?? join(dirname(path), 'qrels', 'test.tsv'));
    case 'multihop':
      return loadMultihop(path);
    case 'graphrag':
      return loadGraphrag(path);
  }
}

async function jsonl(path: string): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  for await (const { line, lineNo } of readLines(path)) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      throw new RetrieverError('BAD_INPUT', `${path} line ${lineNo}: not valid JSON`);
    }
  }
  return out;
}

async function jsonArray(path: string): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  for await (const { value } of readJsonValues(path)) out.push(value as Record<string, unknown>);
  return out;
}

function str(v: unknown, what: string, path: string): string {
  if (typeof v !== 'string') throw new RetrieverError('BAD_INPUT', `${path}: ${what} must be a string`);
  return v;
}

async function loadFlashrag(path: string): Promise<EvalQuery[]> {
  return (await jsonl(path)).map((r, i) => {
    const answers = Array.isArray(r['golden_answers']) ? (r['golden_answers'] as unknown[]).map(String) : [];
    const judge: Judge = { kind: 'answers', answers };
    if (Array.isArray(r['supporting_ids']))
      judge.supportingIds = new Set((r['supporting_ids'] as unknown[]).map(String));
    return {
      id: String(r['id'] ?? i),
      text: str(r['question'], '"question"', path),
      type: typeof r['type'] === 'string' ? r['type'] : 'all',
      judge,
    };
  });
}

async function loadBeir(path: string, qrelsPath: string): Promise<EvalQuery[]> {
  const grades = new Map<string, Map<string, number>>();
  let qrelsText: string;
  try {
    qrelsText = readFileSync(qrelsPath, 'utf8');
  } catch {
    throw new RetrieverError('BAD_INPUT', `BEIR qrels not found at ${qrelsPath}: pass --qrels PATH`);
  }
  for (const [n, line] of qrelsText.split('\n').entries()) {
    const cols = line.trim().split('\t');
    if (cols.length < 3 || (n === 0 && cols[0] === 'query-id')) continue;
    const [q, d, s] = cols as [string, string, string];
    const g = grades.get(q) ?? new Map<string, number>();
    g.set(d, Number(s));
    grades.set(q, g);
  }
  return (await jsonl(path))
    .filter((r) => grades.has(String(r['_id'])))
    .map((r) => ({
      id: String(r['_id']),
      text: str(r['text'], '"text"', path),
      type: 'all',
      judge: { kind: 'docs' as const, grades: grades.get(String(r['_id'])) as Map<string, number> },
    }));
}

async function loadMultihop(path: string): Promise<EvalQuery[]> {
  return (await jsonArray(path)).map((r, i) => {
    const ev = Array.isArray(r['evidence_list']) ? (r['evidence_list'] as Array<Record<string, unknown>>) : [];
    return {
      id: String(i),
      text: str(r['query'], '"query"', path),
      type: typeof r['question_type'] === 'string' ? r['question_type'] : 'all',
      judge: { kind: 'titles' as const, titles: new Set(ev.map((e) => String(e['title'] ?? ''))) },
    };
  });
}

async function loadGraphrag(path: string): Promise<EvalQuery[]> {
  return (await jsonArray(path)).map((r, i) => {
    const ev = r['evidence'];
    const text = Array.isArray(ev) ? ev.map(String).join(' ') : String(ev ?? '');
    return {
      id: String(r['id'] ?? i),
      text: str(r['question'], '"question"', path),
      type: typeof r['question_type'] === 'string' ? r['question_type'] : 'all',
      judge: { kind: 'evidence' as const, text },
    };
  });
}

import { join } from 'node:path';
import type { EvalFormat } from '../../src/eval/queries.js';
import { SHARED } from './common.js';

/** One of the shared data sets: its corpus, queries and the metric tuning aims at. */
export interface Dataset {
  name: string;
  input: string;
  format: string;
  queries: string;
  queryFormat: EvalFormat;
  /** The metric the tuning maximises on the tuning half. */
  objective: string;
}

export const DATASETS: Dataset[] = [
  {
    name: '2wiki',
    input: join(SHARED, 'data/2wiki-200/corpus.jsonl'),
    format: 'wiki18',
    queries: join(SHARED, 'data/2wiki-200/queries.jsonl'),
    queryFormat: 'flashrag',
    objective: 'R@5',
  },
  {
    name: 'graphrag-medical',
    input: join(SHARED, 'data/graphrag-bench/medical.json'),
    format: 'graphrag',
    queries: join(SHARED, 'data/graphrag-bench/medical_questions.json'),
    queryFormat: 'graphrag',
    objective: 'R@5',
  },
  {
    name: 'graphrag-novel',
    input: join(SHARED, 'data/graphrag-bench/novel.json'),
    format: 'graphrag',
    queries: join(SHARED, 'data/graphrag-bench/novel_questions.json'),
    queryFormat: 'graphrag',
    objective: 'R@5',
  },
  {
    name: 'multihop',
    input: join(SHARED, 'data/multihop-rag/corpus.surrogate.json'),
    format: 'multihop',
    queries: join(SHARED, 'data/multihop-rag/MultiHopRAG.surrogate.json'),
    queryFormat: 'multihop',
    objective: 'R@5',
  },
];

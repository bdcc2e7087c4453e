import type { CorpusFormat } from '../core/contracts.js';
import { splitTitleLine } from './title-line.js';

/**
 * What the dense arm embeds for a chunk. The stored text (what searches
 * return) is always FlashRAG's `"Title"\nbody`; the encoder sees either that
 * (`contents`) or the title and body joined by a space (`title-body`, the
 * BEIR/MTEB convention the e5 and bge model cards were scored with).
 */
export const DENSE_TEXT_RULES = ['contents', 'title-body'] as const;
export type DenseTextRule = (typeof DENSE_TEXT_RULES)[number];

/**
 * Each input format's own convention: BEIR is embedded as `title text`, as
 * BEIR and MTEB embed it; wiki-18 as its `contents`, unchanged, so vectors
 * imported from Search-R1's and FlashRAG's FAISS indexes (built that way)
 * match ours. MultiHop-RAG and GraphRAG-Bench by what measured best on their
 * data sets with e5-small-v2 (BENCHMARKS.md, "The text the dense arm
 * embeds"): MultiHop-RAG's news titles help the dense arm, GraphRAG-Bench's
 * corpus names do not. jsonl records ({id, title, text}) are BEIR's shape
 * and follow BEIR (no jsonl data set here to measure); so do folders of
 * files, whose titles are headings and document titles, as BEIR's are.
 */
export const DEFAULT_DENSE_TEXT: Record<CorpusFormat, DenseTextRule> = {
  beir: 'title-body',
  wiki18: 'contents',
  kilt: 'contents',
  jsonl: 'title-body',
  multihop: 'title-body',
  graphrag: 'contents',
  files: 'title-body',
};

/** The encoder's input for a chunk stored as `contents` whose body starts at `bodyStart`. */
export function denseText(rule: DenseTextRule, contents: string, bodyStart: number): string {
  if (rule === 'contents' || bodyStart <= 0) return contents;
  const { title } = splitTitleLine(contents.slice(0, bodyStart));
  const body = contents.slice(bodyStart);
  if (title === '') return body;
  return body === '' ? title : `${title} ${body}`;
}

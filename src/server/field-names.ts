import { describeValue, RetrieverError } from '../errors.js';
import { editDistance } from '../util/edit-distance.js';

/**
 * The one rule for the fields of every route and tool: a field the request
 * does not take is an error naming it and the nearest valid name (an RL run
 * that sends `top_k` to /retrieve, which reads `topk`, would otherwise train
 * on the default top-k without a word), and an unambiguous numeric string
 * from an LLM (`"top_k": "5"`) is taken as the number.
 */

/** Names people and models use for the same field: the one a route takes is suggested for the others. */
const SAME_MEANING: readonly (readonly string[])[] = [
  ['top_k', 'topk', 'top_n', 'topK', 'top-k', 'k', 'n', 'num', 'limit', 'size', 'num_results', 'max_results', 'count'],
  ['return_scores', 'return_score', 'scores', 'with_scores', 'include_scores'],
  ['queries', 'query', 'q', 'question', 'questions', 'text'],
  ['ids', 'id', 'chunk_id', 'chunk_ids', 'passage_id', 'passage_ids'],
  ['doc_id', 'document_id', 'docid'],
];

/** Throws BAD_INPUT for the first field of `obj` that is not in `allowed`, with the nearest valid name. */
export function rejectUnknownFields(
  where: string,
  obj: Record<string, unknown>,
  allowed: readonly string[],
  noun = 'field',
): void {
  for (const key of Object.keys(obj)) {
    if (allowed.includes(key)) continue;
    const near = nearestField(key, allowed);
    throw new RetrieverError(
      'BAD_INPUT',
      `unknown ${noun} ${describeValue(key)} in ${where}${near ? `: did you mean "${near}"?` : ''} ` +
        `(${where} takes ${allowed.join(', ')})`,
    );
  }
}

export function nearestField(key: string, allowed: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  for (const group of SAME_MEANING) {
    if (!group.some((g) => g.toLowerCase() === lower)) continue;
    const hit = allowed.find((a) => group.includes(a));
    if (hit) return hit;
  }
  let best: string | undefined;
  let bestD = Infinity;
  for (const a of allowed) {
    const d = editDistance(lower, a.toLowerCase());
    if (d < bestD) [best, bestD] = [a, d];
  }
  return bestD <= 2 ? best : undefined;
}

/** `"5"` → 5 (an integer written as a string, as LLMs often send); anything else unchanged. */
export function intLike(v: unknown): unknown {
  return typeof v === 'string' && /^\s*[+-]?\d{1,15}\s*$/.test(v) ? Number(v) : v;
}

/** `"true"` / `"false"` → the boolean; anything else unchanged. */
export function boolLike(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trim().toLowerCase();
  return t === 'true' ? true : t === 'false' ? false : v;
}

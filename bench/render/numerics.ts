import { type Results, runLine } from './lib.js';

/** A cosine near 1 as 1 − its distance from 1, so that the digits that differ show. */
function oneMinus(c: number): string {
  return c >= 1 ? '1' : `1 − ${(1 - c).toExponential(1)}`;
}

/** The product's vectors against the Python references, and the encoders' speed in the same run. */
export function renderNumerics(results: Results): string {
  const entries = Object.entries(results)
    .filter(([name]) => name.startsWith('numerics-'))
    .sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return '_No numerics results yet: run `npm run bench -- numerics`._';
  const lines = [
    '| model | reference | min cosine | mean cosine | texts/s, reference | texts/s, ours | ours ÷ reference | query p50 ms, reference | query p50 ms, ours |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const [, r] of entries) {
    const ours = r['ours'] as { texts_per_s: number; query_p50_ms: number };
    for (const ref of (r['references'] as Array<Record<string, unknown>>) ?? []) {
      const cos = ref['cosine'] as { min: number; mean: number };
      const tps = ref['texts_per_s'] as number;
      const engine = ref['engine'] === 'st' ? 'sentence-transformers' : 'tokenizers + onnxruntime (Python)';
      lines.push(
        `| ${String(r['model'])} | ${engine} | ${oneMinus(cos.min)} | ${oneMinus(cos.mean)} | ${tps.toFixed(1)} | ${ours.texts_per_s.toFixed(1)} | ${(ours.texts_per_s / tps).toFixed(2)} | ${(ref['query_p50_ms'] as number).toFixed(2)} | ${ours.query_p50_ms.toFixed(2)} |`,
      );
    }
  }
  lines.push('', ...entries.map(([name, r]) => `- ${String(r['model'])}: ${runLine(name, r)}`));
  return lines.join('\n');
}

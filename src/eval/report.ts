import type { EvalRow } from './run-eval.js';

/** A Markdown table of eval rows: one row per mode and question type. */
export function formatEvalTable(rows: EvalRow[], ks: number[]): string {
  const metricOrder = [
    ...ks.map((k) => `R@${k}`),
    'MRR@10',
    'nDCG@10',
    ...ks.map((k) => `answer@${k}`),
    ...ks.map((k) => `cov@${k}`),
    'unanswerable',
  ];
  const present = metricOrder.filter((m) => rows.some((r) => r.metrics[m] !== undefined));
  const header = ['mode', 'type', 'queries', 'skipped', ...present];
  const lines = rows.map((r) => [
    r.mode,
    r.type,
    String(r.queries),
    String(r.skipped),
    ...present.map((m) => (r.metrics[m] === undefined ? '' : (r.metrics[m] as number).toFixed(4))),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const fmt = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  const table = [fmt(header), fmt(widths.map((w) => '-'.repeat(w))), ...lines.map(fmt)].join('\n');
  const notes = [
    'skipped: queries with nothing to judge by (no gold title, answer or evidence text), left out of every mean.',
    ...(present.includes('unanswerable')
      ? [
          'unanswerable: the share of queries whose evidence no chunk of the corpus contains (at the --evidence-threshold); ' +
            'R@k, MRR and nDCG are means over the others, cov@k over all.',
        ]
      : []),
  ];
  return `${table}\n\n${notes.join('\n')}`;
}

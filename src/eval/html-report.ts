import type { SearchHit } from '../search/types.js';
import type { EvalDetails, EvalRow } from './run-eval.js';

export interface HtmlReportInput {
  corpus: string;
  queriesPath: string;
  queryCount: number;
  encoder: string | null;
  builtAt: string;
  rows: EvalRow[];
  details: EvalDetails;
  /** The k of each curve point. */
  ks: number[];
  /** Generation time, passed in so a report is reproducible. */
  generatedAt: string;
  version: string;
}

/** Losses listed in the report at most (the worst first). */
const MAX_LOSSES = 100;
/** Hits shown per list in a loss. */
const LIST_DEPTH = 10;
const COLORS: Record<string, string> = { hybrid: '#2357d9', bm25: '#d9822b', dense: '#2b9e5a' };

/**
 * One self-contained HTML file (inline styles and SVG, no script, no
 * request): the summary table, a curve per metric with a line per mode, and
 * the queries where hybrid ranked worse than an arm, with both lists side by
 * side and the judge's relevant hits marked.
 */
export function renderHtmlReport(r: HtmlReportInput): string {
  const curves = curveMetrics(r.rows).map((m) => chart(m, r.rows, r.ks));
  const losses = hybridLosses(r);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(`eval ${r.corpus}`)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1180px;padding:0 18px;color:#1d232b}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:28px 0 8px} .meta{color:#5b6570;font-size:12px}
table{border-collapse:collapse;margin:8px 0} th,td{border-bottom:1px solid #e4e7eb;padding:5px 8px;text-align:left;vertical-align:top}
th{font-size:12px;color:#5b6570} td.n{text-align:right;font-variant-numeric:tabular-nums}
.charts{display:flex;flex-wrap:wrap;gap:18px} figure{margin:0} figcaption{font-weight:600;margin-bottom:4px}
.loss{border:1px solid #e4e7eb;border-radius:6px;padding:10px 12px;margin:10px 0}
.lists{display:grid;grid-template-columns:1fr 1fr;gap:12px} ol{margin:4px 0;padding-left:22px} li{margin:2px 0}
li.rel{background:#e7f6ec} .tag{font-size:11px;color:#2b9e5a;font-weight:600}
</style></head><body>
<h1>${esc(`Evaluation of ${r.corpus}`)}</h1>
<p class="meta">${esc(`${r.queryCount} queries from ${r.queriesPath} · encoder ${r.encoder ?? 'none (BM25 only)'} · index built ${r.builtAt} · retriever-mcp ${r.version} · ${r.generatedAt}`)}</p>
<h2>Summary</h2>
${summaryTable(r.rows)}
<h2>Curves</h2>
<div class="charts">${curves.join('\n')}</div>
<h2>Where hybrid lost to an arm</h2>
${losses}
</body></html>
`;
}

/** The depths the summary shows of each metric measured at many (the curves show them all). */
const SUMMARY_KS = new Set([1, 5, 10]);

function summaryTable(rows: EvalRow[]): string {
  // a laptop's width: R@1, R@5, R@10 and the deepest, nDCG@10, MRR@10, …, not every curve point
  const all = [...new Set(rows.flatMap((r) => Object.keys(r.metrics)))];
  const deepest = Math.max(...all.map((n) => Number(n.split('@')[1]) || 0));
  const names = all
    .filter((n) => {
      const [family, k] = n.split('@');
      if (k === undefined) return true;
      if (family === 'nDCG' || family === 'MRR') return k === '10';
      return SUMMARY_KS.has(Number(k)) || Number(k) === deepest;
    })
    .sort(byMetric);
  const head = ['mode', 'type', 'queries', ...names].map((h) => `<th>${esc(h)}</th>`).join('');
  const body = rows
    .map(
      (r) =>
        `<tr><td>${esc(r.mode)}</td><td>${esc(r.type)}</td><td class="n">${r.queries}</td>` +
        names
          .map((n) => `<td class="n">${r.metrics[n] === undefined ? '' : (r.metrics[n] as number).toFixed(4)}</td>`)
          .join('') +
        '</tr>',
    )
    .join('\n');
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** The metric families measured at each k: R@k, nDCG@k, answer@k, cov@k, whichever the judge gave. */
function curveMetrics(rows: EvalRow[]): string[] {
  const all = rows.find((r) => r.type === 'all')?.metrics ?? {};
  return ['R', 'nDCG', 'answer', 'cov'].filter((f) => Object.keys(all).filter((k) => k.startsWith(`${f}@`)).length > 1);
}

function chart(family: string, rows: EvalRow[], ks: number[]): string {
  const W = 360;
  const H = 220;
  const pad = { l: 40, r: 12, t: 10, b: 30 };
  const all = rows.filter((r) => r.type === 'all');
  const points = ks.filter((k) => all.some((r) => r.metrics[`${family}@${k}`] !== undefined));
  if (points.length < 2) return '';
  const x = (i: number): number => pad.l + (i / (points.length - 1)) * (W - pad.l - pad.r);
  const y = (v: number): number => pad.t + (1 - v) * (H - pad.t - pad.b);
  const grid = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (v) =>
        `<line x1="${pad.l}" x2="${W - pad.r}" y1="${y(v)}" y2="${y(v)}" stroke="#e4e7eb"/>` +
        `<text x="${pad.l - 6}" y="${y(v) + 4}" text-anchor="end" font-size="10" fill="#5b6570">${v.toFixed(2)}</text>`,
    )
    .join('');
  const xs = points
    .map((k, i) => `<text x="${x(i)}" y="${H - 12}" text-anchor="middle" font-size="10" fill="#5b6570">${k}</text>`)
    .join('');
  const lines = all
    .map((r) => {
      const pts = points.map((k, i) => `${x(i).toFixed(1)},${y(r.metrics[`${family}@${k}`] ?? 0).toFixed(1)}`);
      const color = COLORS[r.mode] ?? '#666';
      return (
        `<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.join(' ')}"><title>${esc(r.mode)}</title></polyline>` +
        pts.map((p) => `<circle cx="${p.split(',')[0]}" cy="${p.split(',')[1]}" r="2.5" fill="${color}"/>`).join('')
      );
    })
    .join('');
  const legend = all
    .map(
      (r, i) =>
        `<text x="${pad.l + 8 + i * 70}" y="${pad.t + 12}" font-size="11" fill="${COLORS[r.mode] ?? '#666'}">■ ${esc(r.mode)}</text>`,
    )
    .join('');
  return (
    `<figure><figcaption>${esc(family)}@k</figcaption>` +
    `<svg width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(family)} at k">` +
    `${grid}${xs}${lines}${legend}<text x="${W / 2}" y="${H - 1}" text-anchor="middle" font-size="10" fill="#5b6570">k</text></svg></figure>`
  );
}

/** The per-query metric losses are judged by: nDCG@10 where the judge gives it, else the deepest recall, answer or coverage. */
function lossMetric(d: EvalDetails, ks: number[]): string | undefined {
  const names = new Set([...d.modes.values()].flatMap((m) => m.scores.flatMap((s) => Object.keys(s.metrics))));
  if (names.has('nDCG@10')) return 'nDCG@10';
  for (const f of ['R', 'answer', 'cov']) {
    const k = [...ks].reverse().find((k) => names.has(`${f}@${k}`));
    if (k !== undefined) return `${f}@${k}`;
  }
  return undefined;
}

function hybridLosses(r: HtmlReportInput): string {
  const d = r.details;
  const hybrid = d.modes.get('hybrid');
  const arms = ['bm25', 'dense'].filter((m) => d.modes.has(m));
  const metric = lossMetric(d, r.ks);
  if (!hybrid || arms.length === 0 || !metric) {
    return '<p class="meta">Needs hybrid and at least one arm among the evaluated modes (run without --mode, or with --mode hybrid,bm25,dense).</p>';
  }
  const losses: Array<{ i: number; arm: string; by: number }> = [];
  d.queries.forEach((_, i) => {
    const h = hybrid.scores[i];
    if (!h || h.skipped) return;
    const hv = h.metrics[metric] ?? 0;
    let best: { arm: string; v: number } | undefined;
    for (const arm of arms) {
      const v = d.modes.get(arm)?.scores[i]?.metrics[metric] ?? 0;
      if (v > hv && (!best || v > best.v)) best = { arm, v };
    }
    if (best) losses.push({ i, arm: best.arm, by: best.v - hv });
  });
  losses.sort((a, b) => b.by - a.by || a.i - b.i);
  const judged = hybrid.scores.filter((s) => !s.skipped).length;
  const head = `<p class="meta">${losses.length} of ${judged} judged queries rank worse in hybrid than in an arm by ${esc(metric)}${losses.length > MAX_LOSSES ? `; the ${MAX_LOSSES} largest losses are shown` : ''}. Relevant hits (by the judge's own rule) are marked.</p>`;
  const items = losses.slice(0, MAX_LOSSES).map(({ i, arm, by }) => {
    const q = d.queries[i] as { text: string; id: string };
    const list = (mode: string): string => {
      const hits = (d.modes.get(mode)?.lists[i] ?? []).slice(0, LIST_DEPTH);
      const score = d.modes.get(mode)?.scores[i]?.metrics[metric] ?? 0;
      return (
        `<div><b>${esc(mode)}</b> <span class="meta">${esc(metric)} ${score.toFixed(3)}</span><ol>` +
        hits.map((h) => hitItem(h, d.relevant(i, h))).join('') +
        '</ol></div>'
      );
    };
    return `<div class="loss"><div><b>${esc(q.text)}</b> <span class="meta">query ${esc(q.id)} · ${esc(arm)} ahead by ${by.toFixed(3)}</span></div><div class="lists">${list('hybrid')}${list(arm)}</div></div>`;
  });
  return head + items.join('\n');
}

function hitItem(h: SearchHit, relevant: boolean): string {
  const text = h.text.length > 160 ? `${h.text.slice(0, 160)}…` : h.text;
  return `<li${relevant ? ' class="rel"' : ''}>${relevant ? '<span class="tag">relevant</span> ' : ''}<b>${esc(h.title || h.doc_id)}</b> <span class="meta">${esc(h.id)}</span><br>${esc(text)}</li>`;
}

function byMetric(a: string, b: string): number {
  const [fa, ka] = a.split('@');
  const [fb, kb] = b.split('@');
  return fa === fb ? Number(ka) - Number(kb) : (fa as string).localeCompare(fb as string);
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

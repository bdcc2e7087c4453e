import { type Result, type Results, runLine } from './lib.js';

type KStats = Record<string, { p50_ms: number; p99_ms: number; qps: number; qps_2_threads?: number }>;

/** BM25 on real Wikipedia text against Lucene, bm25s and tantivy, one query at a time. */
export function renderBm25Real(results: Results): string {
  // smallest corpus first
  const present = ['bm25-real', 'bm25-real-2m', 'bm25-real-21m'].filter((name) => results[name]);
  if (present.length === 0) return '_No results yet: run `npm run bench -- bm25-real`._';
  const lines = [
    '| passages | queries | engine | top-100 p50 ms | top-100 p99 ms | top-100 p50 ÷ Lucene | top-100 QPS, 2 threads | overlap@10 with ours | nDCG@10 vs ours | index MiB | build s |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const ms = (v: number | undefined): string => (v === undefined ? '—' : v.toFixed(2));
  const runs: string[] = [];
  for (const name of present) {
    const r = results[name] as Result;
    const n = (r['passages'] as number | undefined) ?? 1_232_684;
    const passages = `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 2)}M`;
    for (const set of (r['results'] as Array<Record<string, unknown>>) ?? []) {
      const label = `${String(set['queries'])} (${(set['meanWords'] as number).toFixed(1)} words)`;
      const ours = set['ours'] as {
        by_k: KStats;
        exhaustive_by_k?: KStats;
        two_threads_by_k?: KStats;
        index_bytes: number;
        build_s: number | null;
      };
      const peers = set['peers'] as Record<
        string,
        { by_k: KStats; index_bytes: number; build_s: number; overlap10: number; ndcg10?: number }
      >;
      const lucene = peers['lucene']?.by_k['100']?.p50_ms;
      const ratio = (v: number | undefined): string =>
        v === undefined || lucene === undefined ? '—' : `${(v / lucene).toFixed(2)}×`;
      const row = (engine: string, by: KStats, rest: string): void => {
        lines.push(
          `| ${passages} | ${label} | ${engine} | ${ms(by['100']?.p50_ms)} | ${ms(by['100']?.p99_ms)} | ${ratio(by['100']?.p50_ms)} | ${rest}`,
        );
      };
      const twoQps = ours.two_threads_by_k?.['100']?.qps;
      const size = (ours.index_bytes / 2 ** 20).toFixed(0);
      const built = ours.build_s === null ? 'cached' : ours.build_s.toFixed(1);
      row(
        '**ours**, block-max',
        ours.by_k,
        `${twoQps === undefined ? '—' : twoQps.toFixed(0)} | — | — | ${size} | ${built} |`,
      );
      if (ours.exhaustive_by_k) row('ours, exhaustive', ours.exhaustive_by_k, '— | — | — | — | — |');
      for (const [peer, p] of Object.entries(peers)) {
        const q2 = p.by_k['100']?.qps_2_threads;
        row(
          peer,
          p.by_k,
          `${q2 === undefined ? '—' : q2.toFixed(0)} | ${p.overlap10.toFixed(3)} | ${p.ndcg10 === undefined ? '—' : p.ndcg10.toFixed(3)} | ${(p.index_bytes / 2 ** 20).toFixed(0)} | ${p.build_s.toFixed(1)} |`,
        );
      }
    }
    runs.push(`${passages}: ${runLine(name, r)}`);
  }
  const rss = present
    .map((name) => {
      const r = results[name] as Result;
      const n = (r['passages'] as number | undefined) ?? 1_232_684;
      const first = ((r['results'] as Array<Record<string, unknown>>) ?? [])[0]?.['ours'] as
        { rss_ready_mib?: number } | undefined;
      return first?.rss_ready_mib === undefined
        ? undefined
        : `${first.rss_ready_mib.toFixed(0)} MiB at ${(n / 1e6).toFixed(n >= 1e7 ? 0 : 2)}M`;
    })
    .filter(Boolean);
  if (rss.length > 0) lines.push('', `Our resident memory once ready: ${rss.join(', ')}.`);
  lines.push('', `Runs: ${runs.join('; ')}.`);
  return lines.join('\n');
}

/** How the scaled-up text compares with the real text it came from. */
export function renderScaleCorpus(results: Results): string {
  const names = Object.keys(results)
    .filter((n) => n.startsWith('scale-corpus-'))
    .sort((a, b) => Number(a.slice(13)) - Number(b.slice(13)));
  if (names.length === 0) return '_No results yet: run `npm run bench -- scale-corpus`._';
  const lines = [
    '| corpus | text | passages compared | words p10 / p50 / p90 | terms with df 1 | df 2–9 | df 10–99 | df 100–999 | df 1,000+ | df of the 1,000 commonest words, correlation | mean \\|log df ratio\\| | pair lift of 200 common words, correlation |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const runs: string[] = [];
  for (const name of names) {
    const r = results[name] as Result;
    const label = `${((r['passages'] as number) / 1e6).toFixed(2)}M`;
    const agree = r['agreement'] as {
      commonDfCorrelation: number;
      commonDfMeanAbsRatio: number;
      pairLiftCorrelation: number;
    } | null;
    for (const [what, side] of [
      ['real', r['real']],
      ['re-cut copy', r['synthetic']],
    ] as const) {
      if (!side) continue;
      const t = side as { passages: number; words: Record<string, number>; vocabulary: Record<string, number> };
      const v = t.vocabulary;
      const big = (v['df 1000-9999'] ?? 0) + (v['df 10000+'] ?? 0);
      const tail =
        what === 'real' || !agree
          ? '— | — | — |'
          : `${agree.commonDfCorrelation.toFixed(5)} | ${agree.commonDfMeanAbsRatio.toFixed(3)} | ${agree.pairLiftCorrelation.toFixed(4)} |`;
      lines.push(
        `| ${label} | ${what} | ${t.passages.toLocaleString('en-US')} | ${t.words['p10']} / ${t.words['p50']} / ${t.words['p90']} | ${(v['df 1-1'] ?? 0).toLocaleString('en-US')} | ${(v['df 2-9'] ?? 0).toLocaleString('en-US')} | ${(v['df 10-99'] ?? 0).toLocaleString('en-US')} | ${(v['df 100-999'] ?? 0).toLocaleString('en-US')} | ${big.toLocaleString('en-US')} | ${tail}`,
      );
    }
    runs.push(`${label}: ${runLine(name, r)}`);
  }
  lines.push('', `Runs: ${runs.join('; ')}.`);
  return lines.join('\n');
}

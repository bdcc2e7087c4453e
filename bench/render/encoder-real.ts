/** Our encoder against the Python stacks (bench/suites/encoder-real.ts): the rows, then the ratios the targets name. */
import { type Results, type Row, rows, runLine, table } from './lib.js';

export function renderEncoderReal(results: Results): string {
  const r = results['encoder-real'];
  if (!r) return '_No results yet: run `npm run bench -- encoder-real`._';
  const list = rows(r);
  const label = (engine: unknown): string =>
    String(engine)
      .replace('ours: encoder alone (in-process)', 'ours, encoder alone')
      .replace('ours: POST /retrieve at one client, --batch-wait-ms ', 'ours, `/retrieve`, batch wait ms ');
  const num = (x: Row | undefined, k: string): number => (typeof x?.[k] === 'number' ? (x[k] as number) : NaN);
  const ratio = (v: number): string => (Number.isFinite(v) ? `${v.toFixed(2)}×` : '—');
  const models = [...new Set(list.map((x) => String(x['model'])))];
  const lines = [
    '| model | build passages/s: ours ÷ fastest peer (target ≥ 1) | query p50: fastest peer’s encoder ÷ our `/retrieve` (≥ 1) | query p50: fastest peer ÷ our encoder |',
    '| --- | --- | --- | --- |',
  ];
  for (const m of models) {
    const mine = list.filter((x) => x['model'] === m);
    const peers = mine.filter((x) => !String(x['engine']).startsWith('ours') && x['error'] === undefined);
    const fastestBuild = Math.max(...peers.map((x) => num(x, 'passages/s')));
    const fastestQuery = Math.min(...peers.map((x) => num(x, 'query p50 ms')));
    const alone = mine.find((x) => String(x['engine']).startsWith('ours: encoder alone'));
    const e2e = mine.find((x) => String(x['engine']).endsWith('--batch-wait-ms 0'));
    lines.push(
      `| ${m} | ${ratio(num(alone, 'passages/s') / fastestBuild)} | ${ratio(fastestQuery / num(e2e, 'query p50 ms'))} | ${ratio(fastestQuery / num(alone, 'query p50 ms'))} |`,
    );
  }
  const build = (m: string): number =>
    num(
      list.find((x) => x['model'] === m && String(x['engine']).startsWith('ours: encoder alone')),
      'passages/s',
    );
  const int8 = build('e5-small-v2-int8') / build('e5-small-v2');
  return [
    table(list.map((x) => ({ ...x, engine: label(x['engine']) }))),
    '',
    lines.join('\n'),
    '',
    `Our int8 build throughput ÷ our fp32 (target ≥ 2): ${ratio(int8)}.`,
    '',
    `${runLine('encoder-real', r)}.`,
  ].join('\n');
}

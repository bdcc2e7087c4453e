import { type Result, type Results, runLine } from './lib.js';

/** The load level the tables show beside one client's p50; the levels between are in each run's JSON. */
const SHOWN = ['256'];

/** The seed stack's servers beside ours under the same load (bench/side-by-side.ts). */
export function renderSideBySide(results: Results): string {
  const names = Object.keys(results)
    .filter((n) => n.startsWith('side-by-side-'))
    .sort();
  if (names.length === 0) return '_No results yet: run `npm run bench -- side-by-side` (see its header)._';
  const lines = [
    '| run | server | p50 ms, 1 client | QPS at 256 | p50 ms at 256 | p99 ms at 256 | errors | top-3 agreement with ours |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const runs: string[] = [];
  for (const name of names) {
    const r = results[name] as Result;
    const servers = (r['servers'] as Array<Record<string, unknown>>) ?? [];
    for (const s of servers) {
      const load = s['load'] as Record<
        string,
        { rps: number; p50ms: number; p99ms: number; non2xx: number; socketErrors: number }
      >;
      for (const [, w] of Object.entries(load).filter(([level]) => SHOWN.includes(level))) {
        lines.push(
          `| ${name.slice(13)} | ${String(s['name'])} | ${load['1']?.p50ms.toFixed(1) ?? '—'} | ${w.rps.toFixed(0)} | ${w.p50ms.toFixed(1)} | ${w.p99ms.toFixed(1)} | ${w.non2xx + w.socketErrors} | ${(s['agreement_top3'] as number).toFixed(3)} |`,
        );
      }
    }
    runs.push(`${name.slice(13)}: ${runLine(name, r)}`);
  }
  lines.push('', `Runs: ${runs.join('; ')}.`);
  return lines.join('\n');
}

/**
 * MCP servers under the same SSE load and judged on the same queries
 * (bench/mcp-side-by-side.ts).
 */
export function renderMcpSideBySide(results: Results): string {
  const names = Object.keys(results)
    .filter((n) => n.startsWith('mcp-side-by-side-'))
    .sort();
  if (names.length === 0) return '_No results yet: run `npm run bench -- mcp-side-by-side` (see its header)._';
  type Load = { qps: number; p50ms: number; p99ms: number; errors: number };
  // the model gets a column when the runs used more than one, else a line under the table
  const models = [...new Set(names.map((n) => String((results[n] as Result)['model'])))];
  const modelCell = (r: Result): string => (models.length > 1 ? ` ${String(r['model'])} |` : '');
  const lines = [
    `| data set |${models.length > 1 ? ' model |' : ''} server | p50 ms, 1 client | QPS at 256 | p50 ms at 256 | p99 ms at 256 | errors | R@5 | top-5 agreement with ours |`,
    `| --- |${models.length > 1 ? ' --- |' : ''} --- | --- | --- | --- | --- | --- | --- | --- |`,
  ];
  const runs: string[] = [];
  for (const name of names) {
    const r = results[name] as Result;
    const servers = (r['servers'] as Array<Record<string, unknown>>) ?? [];
    for (const s of servers) {
      const load = s['load'] as Record<string, Load>;
      const r5 = ((s['quality'] as Record<string, number>)['R@5'] ?? NaN).toFixed(4);
      const levels = Object.keys(load)
        .filter((level) => SHOWN.includes(level))
        .sort((a, b) => Number(a) - Number(b));
      for (const c of levels) {
        const w = load[c] as Load;
        lines.push(
          `| ${String(r['dataset'])} |${modelCell(r)} ${String(s['name'])} | ${load['1']?.p50ms.toFixed(1) ?? '—'} | ${w.qps.toFixed(1)} | ${w.p50ms.toFixed(1)} | ${w.p99ms.toFixed(1)} | ${w.errors} | ${r5} | ${(s['agreement_top5'] as number).toFixed(3)} |`,
        );
      }
    }
    runs.push(`${name.slice(17)}: ${runLine(name, r)}`);
  }
  lines.push('', ...(models.length === 1 ? [`Model: ${models[0]}.`, ''] : []), `Runs: ${runs.join('; ')}.`);
  return lines.join('\n');
}

/**
 * Ours against each peer of every side-by-side run (REST and MCP), as
 * ratios from the same run, beside the seed-stack issue's targets: ≥ 5× the
 * QPS at 256 clients, ≤ 1/3 of the memory, a first answer ≥ 10× sooner, and
 * quality equal or better. `short`: README's table.
 */
export function renderSeedRatios(results: Results, short: boolean): string {
  type Server = Record<string, unknown>;
  const qpsOf = (s: Server): number => {
    const load = s['load'] as Record<string, { rps?: number; qps?: number }>;
    const top = Object.keys(load).sort((a, b) => Number(b) - Number(a))[0] as string;
    return load[top]?.rps ?? load[top]?.qps ?? NaN;
  };
  const errorsOf = (s: Server): number => {
    const load = s['load'] as Record<string, { non2xx?: number; socketErrors?: number; errors?: number }>;
    return Object.values(load).reduce((n, w) => n + (w.errors ?? (w.non2xx ?? 0) + (w.socketErrors ?? 0)), 0);
  };
  const num = (v: unknown): number => (typeof v === 'number' ? v : NaN);
  const x = (v: number, digits = 1): string => (Number.isFinite(v) ? `${v.toFixed(digits)}×` : '—');
  const r5 = (s: Server): string => {
    const v = (s['quality'] as Record<string, number> | undefined)?.['R@5'];
    return v === undefined ? '—' : v.toFixed(4);
  };
  const runs = Object.keys(results)
    .filter((n) => n.startsWith('side-by-side-') || n.startsWith('mcp-side-by-side-'))
    .sort();
  if (runs.length === 0) return '_No side-by-side results yet._';
  const lines = short
    ? [
        '| run | peer, same run | QPS at 256 clients, ours ÷ peer | memory, peer ÷ ours | first answer, peer ÷ ours | R@5 ours | R@5 peer |',
        '| --- | --- | --- | --- | --- | --- | --- |',
      ]
    : [
        '| run | peer, same run | QPS at 256 clients, ours ÷ peer’s (target ≥ 5×) | errors, ours | errors, peer | resident memory, peer’s ÷ ours (≥ 3×) | time to first answer, peer’s ÷ ours (≥ 10×) | index on disk, peer’s ÷ ours | build time, peer’s ÷ ours | R@5 ours | R@5 peer | targets missed |',
        '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      ];
  let allErrors = 0;
  for (const name of runs) {
    const r = results[name] as Result;
    // servers named ours… are ours (a run may hold several, e.g. fp32 and int8); the rest are peers
    const servers = (r['servers'] as Server[]) ?? [];
    const isOurs = (s: Server): boolean => String(s['name']).startsWith('ours');
    const peers = servers.filter((s) => !isOurs(s));
    for (const ours of servers.filter(isOurs)) {
      allErrors += errorsOf(ours);
      const model = r['model'] === undefined || r['model'] === 'all-MiniLM-L6-v2' ? '' : `, ${String(r['model'])}`;
      const variant = ours['name'] === 'ours' ? '' : ` (${String(ours['name']).slice(5)})`;
      const label = name.startsWith('mcp-') ? `${String(r['dataset'])}, MCP${model}${variant}` : name.slice(13);
      for (const p of peers) {
        allErrors += errorsOf(p);
        const ratios = {
          qps: qpsOf(ours) / qpsOf(p),
          mem: num(p['rss_mib']) / num(ours['rss_mib']),
          first: num(p['first_answer_s']) / num(ours['first_answer_s']),
        };
        const ourR5 = (ours['quality'] as Record<string, number> | undefined)?.['R@5'];
        const peerR5 = (p['quality'] as Record<string, number> | undefined)?.['R@5'];
        const missed = [
          ratios.qps < 5 ? `QPS ${x(ratios.qps)} of 5×` : '',
          ratios.mem < 3 ? `memory ${x(ratios.mem)} of 3×` : '',
          ratios.first < 10 ? `first answer ${x(ratios.first)} of 10×` : '',
          ourR5 !== undefined && peerR5 !== undefined && ourR5 < peerR5 ? 'quality' : '',
          errorsOf(ours) > 0 ? 'errors' : '',
        ].filter(Boolean);
        const cells = {
          qps: x(ratios.qps),
          mem: x(ratios.mem),
          first: x(ratios.first),
          index: x(num(p['index_mib']) / num(ours['index_mib'])),
          build: x(num(p['build_s']) / num(ours['build_s'])),
        };
        lines.push(
          short
            ? `| ${label} | ${String(p['name'])} | ${cells.qps} | ${cells.mem} | ${cells.first} | ${r5(ours)} | ${r5(p)} |`
            : `| ${label} | ${String(p['name'])} | ${cells.qps} | ${errorsOf(ours)} | ${errorsOf(p)} | ${cells.mem} | ${cells.first} | ${cells.index} | ${cells.build} | ${r5(ours)} | ${r5(p)} | ${missed.length > 0 ? missed.join('; ') : 'none'} |`,
        );
      }
    }
  }
  lines.push(
    '',
    allErrors === 0
      ? 'Every server answered every request at every load level (0 errors).'
      : `Errors across all runs and load levels: ${allErrors} (per server in the tables below).`,
  );
  return lines.join('\n');
}

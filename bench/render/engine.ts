import { type Results, runLine } from './lib.js';

/** The OpenSearch backend beside local files, on the same queries (bench/suites/engine-agreement.ts). */
export function renderEngineAgreement(results: Results): string {
  const out: string[] = [];
  const a = results['engine-agreement'];
  if (a) {
    out.push(
      '| data set (chunks) | modes | overlap@10 | R@5 local | R@5 engine | ms/query local | ms/query engine |',
      '| --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const d of (a['datasets'] as Array<Record<string, unknown>>) ?? []) {
      const modes = Object.entries(d['modes'] as Record<string, Record<string, unknown>>);
      const each = (f: (r: Record<string, unknown>) => string): string => modes.map(([, r]) => f(r)).join(' / ');
      const num = (v: unknown, digits: number): string => (typeof v === 'number' ? v.toFixed(digits) : '—');
      out.push(
        `| ${String(d['dataset'])} (${String(d['chunks'])}) | ${modes.map(([mode]) => mode).join(' / ')} | ${each((r) => num(r['overlap10'], 3))} | ${each((r) => num((r['local'] as Record<string, number>)['R@5'], 3))} | ${each((r) => num((r['engine'] as Record<string, number>)['R@5'], 3))} | ${each((r) => num(r['localMsPerQuery'], 1))} | ${each((r) => num(r['engineMsPerQuery'], 1))} |`,
      );
    }
    out.push('', `${String(a['engine'])}; model ${String(a['model'])}. ${runLine('engine-agreement', a)}.`);
  }
  return out.length > 0 ? out.join('\n') : '_No results yet: run `npm run bench -- engine-agreement`._';
}

/** The OpenSearch backend under the loss of its cluster manager (bench/suites/engine-failover.ts). */
export function renderEngineFailover(results: Results): string {
  const out: string[] = [];
  const f = results['engine-failover'];
  if (f) {
    type Stretch = { seconds: number; qps: number; p50Ms: number; p99Ms: number; maxMs: number; errors: number };
    const row = (label: string, s: Stretch) =>
      `| ${label} | ${s.seconds.toFixed(0)} | ${s.qps.toFixed(0)} | ${s.p50Ms.toFixed(0)} | ${s.p99Ms.toFixed(0)} | ${s.maxMs.toFixed(0)} | ${s.errors} |`;
    out.push(
      '| stretch | seconds | QPS | p50 ms | p99 ms | slowest ms | errors |',
      '| --- | --- | --- | --- | --- | --- | --- |',
      row('embedded (local files), reference', f['embedded'] as Stretch),
      row('engine, before the kill', f['before'] as Stretch),
      row('engine, first 10 s after the kill', f['firstTenSeconds'] as Stretch),
      row('engine, the rest on two nodes', f['rest'] as Stretch),
      ...(f['back']
        ? [
            row('engine, node restarting', f['restarting'] as Stretch),
            row('engine, three nodes again (green)', f['back'] as Stretch),
          ]
        : []),
      '',
      `${String(f['clients'])} clients, hybrid top-5 on ${String(f['dataset'])} (${String(f['chunks'])} chunks, ${String(f['model'])}); ${String(f['engine'])}; killed ${String(f['killed'])}. ` +
        `Longest stretch with no answer: ${(f['longestSilenceMs'] as number).toFixed(0)} ms; throughput back to 80% of the steady rate (3-second mean) ${f['recoveredAfterS'] === null ? 'not within the run' : `after ${String(f['recoveredAfterS'])} s`}; ` +
        `${f['greenAfterRestartS'] !== undefined ? `Restarted on its data, the node rejoined and the cluster was green after ${(f['greenAfterRestartS'] as number).toFixed(1)} s. ` : ''}` +
        `Cluster at the end: ${String((f['clusterAfter'] as { status: string }).status)}, ${String((f['clusterAfter'] as { nodes: number }).nodes)} nodes, ${String(f['chunksAfter'])} chunks. ` +
        `Server resident memory: ${(f['engineServerRssMiB'] as number).toFixed(0)} MiB on the engine, ${(f['embedded'] as { rssMiB: number }).rssMiB.toFixed(0)} MiB embedded. ` +
        `${runLine('engine-failover', f)}.`,
    );
  }
  return out.length > 0 ? out.join('\n') : '_No results yet: run `npm run bench -- engine-failover`._';
}

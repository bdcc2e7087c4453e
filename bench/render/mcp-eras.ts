import { compactTable, fmt, type Results, type Row, rows, runLine } from './lib.js';

/** The long-lived target, row by row, and why what falls short does. */
function longLivedVerdict(list: Row[]): string {
  const ratio = (x: Row): number => Number(x['2026 ÷ 2025']);
  const missed = list.filter((x) => !(ratio(x) >= 1));
  if (missed.length === 0) return 'Target met in every row.';
  const where = missed.map((x) => `${String(x['transport'])} at ${String(x['in flight'])} in flight ${fmt(ratio(x))}×`);
  return (
    `Missed in ${missed.length} of ${list.length} rows (${where.join(', ')}). ` +
    'Over HTTP the SDK still makes a transport for every 2026 exchange, walks the tool’s input schema for `x-mcp-header` declarations on each call and builds an error with its stack when the exchange closes; server instances are reused (no longer built per request). ' +
    'Over stdio one instance serves the connection in both eras, and a 2026 call costs its envelope: `_meta` validated on each request, `resultType` and the server’s identity stamped on each answer.'
  );
}

/**
 * The two client patterns per MCP era: a new client a call (the verl pattern), then one client kept
 * for every call; each with 2026's calls/s as a multiple of 2025's.
 */
export function renderMcpEras(results: Results): string {
  const r = results['mcp-eras'];
  const l = results['mcp-eras-long-lived'];
  const out: string[] = [];
  out.push('A new client a call (the verl pattern):', '');
  if (!r) out.push('_No results yet: run `npm run bench -- mcp-eras --part verl`._');
  else
    out.push(
      compactTable(rows(r)),
      '',
      `Calls/s, 2026 ÷ 2025: ${String(r['ratio_2026_to_2025'])}× (discover each call), ` +
        `${String(r['ratio_2026_cached_to_2025'])}× (discover reused). Target: ≥ 2×.`,
      '',
      `${runLine('mcp-eras', r)}.`,
    );
  out.push(
    '',
    'One client kept for every call, raw JSON-RPC (a 2025 session against 2026 stateless calls, alternating blocks on the same server; target: 2026 ÷ 2025 ≥ 1.0):',
    '',
  );
  if (!l) out.push('_No results yet: run `npm run bench -- mcp-eras --part long-lived`._');
  else
    out.push(
      compactTable(rows(l)),
      '',
      longLivedVerdict(rows(l)),
      '',
      `${runLine('mcp-eras-long-lived', l)}. Where a 2026 call's extra time goes: [lab notes](docs/lab-notes/2026-11-28-query-path-memory-ort.md#mcp-2026-per-call).`,
    );
  return out.join('\n');
}

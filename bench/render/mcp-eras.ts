import { compactTable, type Results, rows, runLine } from './lib.js';

/** The verl pattern per MCP era: the table, then each 2026 mode's calls/s as a multiple of 2025's. */
export function renderMcpEras(results: Results): string {
  const r = results['mcp-eras'];
  if (!r) return '_No results yet: run `npm run bench -- mcp-eras`._';
  return [
    compactTable(rows(r)),
    '',
    `Calls/s, 2026 ÷ 2025: ${String(r['ratio_2026_to_2025'])}× (discover each call), ` +
      `${String(r['ratio_2026_cached_to_2025'])}× (discover reused).`,
    '',
    `${runLine('mcp-eras', r)}.`,
  ].join('\n');
}

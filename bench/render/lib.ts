/** What every renderer shares: a result file's shape and the line that says where a figure came from. */

export interface Machine {
  cpus: number;
  cpu: string;
  memGiB: number;
  node: string;
  os: string;
}

/** A `bench/results/NAME.json` file as `writeResult` wrote it. */
export type Result = Record<string, unknown> & { date?: string; commit?: string; command?: string; machine?: Machine };
export type Row = Record<string, string | number | boolean | null>;
export type Results = Record<string, Result>;

export function rows(r: Result, key = 'rows'): Row[] {
  const v = r[key];
  return Array.isArray(v) ? (v as Row[]) : [];
}

/** A number as a table shows it: integers whole, small figures with two decimals, the rest with one. */
export function fmt(v: unknown): string {
  if (typeof v !== 'number') return String(v ?? '—');
  if (!Number.isFinite(v)) return '—';
  return Number.isInteger(v) ? String(v) : v.toFixed(Math.abs(v) < 10 ? 2 : 1);
}

/** The machine a result names; results from before 2026-11-27 did not record one (BENCHMARKS.md's preface says which it was). */
export function machineText(r: Result): string | undefined {
  const m = r.machine;
  return m ? `${m.cpus} × ${m.cpu}, ${m.memGiB} GiB, Node ${m.node.replace(/^v/, '')}` : undefined;
}

/** "2026-11-25 at 28b9620, `command`, 2 × …, [json](bench/results/NAME.json)": when, how, where, and the data. */
export function runLine(name: string, r: Result): string {
  const parts = [
    `${(r.date ?? '').slice(0, 10)} at ${r.commit ?? 'unknown'}`,
    // a server spec's pid, launch time, first answer and local paths are in the JSON, not for a reader
    ...(r.command ? [`\`${r.command.replace(/,(pid|started|first|index)=[^,\s]+/g, '')}\``] : []),
    ...(machineText(r) ? [machineText(r) as string] : []),
    `[json](bench/results/${name}.json)`,
  ];
  return parts.join(', ');
}

/** The result files whose names start with `prefix` (or equal it), in name order. */
export function named(results: Results, prefix: string): Array<[string, Result]> {
  return Object.entries(results)
    .filter(([name]) => name === prefix || name.startsWith(`${prefix}-`))
    .sort(([a], [b]) => a.localeCompare(b));
}

/**
 * Rows as a table, with the columns that hold one value in every row (of
 * several) said once above it instead.
 */
export function compactTable(list: Row[]): string {
  if (list.length < 2) return table(list);
  const cols = [...new Set(list.flatMap((row) => Object.keys(row)))];
  const constant = cols.filter((c) => list.every((row) => row[c] === list[0]?.[c]));
  if (constant.length === 0 || constant.length === cols.length) return table(list);
  const varying = list.map((row) => Object.fromEntries(Object.entries(row).filter(([c]) => !constant.includes(c))));
  return `${constant.map((c) => `${c}: ${fmt(list[0]?.[c])}`).join('; ')}.\n\n${table(varying as Row[])}`;
}

/** A compact markdown table of rows as a bench printed them (every column any row has). */
export function table(list: Row[]): string {
  const cols = [...new Set(list.flatMap((row) => Object.keys(row)))];
  return [
    `| ${cols.join(' | ')} |`,
    `| ${cols.map(() => '---').join(' | ')} |`,
    ...list.map((row) => `| ${cols.map((c) => fmt(row[c])).join(' | ')} |`),
  ].join('\n');
}

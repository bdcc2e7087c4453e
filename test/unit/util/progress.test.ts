import { describe, expect, it } from 'vitest';
import { createProgress, formatDuration } from '../../../src/util/progress.js';

/** A non-TTY stream: every draw is one plain line. */
function capture(): { lines: string[]; stream: { isTTY: boolean; write(s: string): boolean } } {
  const lines: string[] = [];
  return { lines, stream: { isTTY: false, write: (s: string) => lines.push(s.trimEnd()) > 0 } };
}

describe('progress', () => {
  it('a resumed run counts only its own work in the rate', async () => {
    const fresh = capture();
    const resumed = capture();
    const a = createProgress({ label: 'x', total: 1000, unit: 'v', stream: fresh.stream, intervalMs: 0 });
    const b = createProgress({
      label: 'x',
      total: 1000,
      unit: 'v',
      stream: resumed.stream,
      intervalMs: 0,
      initial: 900,
    });
    await new Promise((r) => setTimeout(r, 50));
    a.update(950);
    b.update(950);
    const rate = (line: string): number => {
      const m = / ([\d.]+)(k|M)? v\/s/.exec(line);
      return Number(m?.[1]) * (m?.[2] === 'k' ? 1e3 : m?.[2] === 'M' ? 1e6 : 1);
    };
    // 950 done in ≈ 50 ms against 50 done in the same time: ≈ 19× the rate
    expect(rate(fresh.lines[0]!)).toBeGreaterThan(5 * rate(resumed.lines[0]!));
    expect(resumed.lines[0]).toContain('950/1000');
  });

  it('an open bar speaks every heartbeat with no work counted, and falls silent once closed (issue 48, item 2)', async () => {
    const out = capture();
    const p = createProgress({ label: 'embed', total: 10, stream: out.stream, heartbeatMs: 100 });
    await new Promise((r) => setTimeout(r, 550));
    const beats = out.lines.length;
    // the first at once, then one every 100 ms: no update() was called at all
    expect(beats).toBeGreaterThanOrEqual(4);
    expect(out.lines.at(-1)).toMatch(/embed .* 0\/10 .* so far/);
    p.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(out.lines.length).toBe(beats);
  });

  it('a quick step under quietMs draws nothing, not even its final line', () => {
    const out = capture();
    const p = createProgress({ label: 'sync', total: 10, stream: out.stream, quietMs: 1000, intervalMs: 0 });
    p.update(5);
    p.finish();
    expect(out.lines).toEqual([]);
  });
});

describe('formatDuration', () => {
  it('rounds to the unit it shows before splitting it (issue 57: "ETA 6m60s")', () => {
    expect(formatDuration(419.6)).toBe('7m00s');
    expect(formatDuration(59.96)).toBe('1m00s');
    expect(formatDuration(59.9)).toBe('59.9s');
    expect(formatDuration(3599.6)).toBe('1h00m');
    expect(formatDuration(7199)).toBe('2h00m');
    expect(formatDuration(125)).toBe('2m05s');
  });
});

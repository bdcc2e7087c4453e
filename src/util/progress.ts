/**
 * A progress bar on stderr with rate and ETA. On a terminal it redraws one
 * line; otherwise (CI logs, files) it prints a plain line every few seconds so
 * logs stay readable. Silence reads as a hang: while a bar is open it is
 * drawn at least every HEARTBEAT_MS (2 s on a terminal, 30 s otherwise),
 * with the time so far, even when no work has been counted meanwhile.
 */
export interface ProgressOptions {
  label: string;
  total?: number; // unknown totals show a counter and rate, no ETA
  unit?: string; // shown after the rate, e.g. "docs" or "MB"
  scale?: number; // divide raw counts by this for display (bytes → MB)
  stream?: NodeJS.WriteStream | { isTTY?: boolean; write(s: string): boolean };
  enabled?: boolean;
  intervalMs?: number;
  /** Work already done before this run (a resumed build): rate and ETA count only what this run does. */
  initial?: number;
  /** Longest silence while the bar is open, ms (default HEARTBEAT_MS). */
  heartbeatMs?: number;
  /** Draw nothing, not even a final line, before this much time has passed, ms (a step that is usually quick). */
  quietMs?: number;
}

/** Longest silence of an open bar, ms: on a terminal, and in a log. */
export const HEARTBEAT_MS = { tty: 1000, plain: 30_000 } as const;

export interface Progress {
  /** `extra` may be a function: it is only called when the line is redrawn. */
  update(done: number, extra?: string | (() => string)): void;
  tick(n?: number): void;
  /** Counts `n` as done without this run doing them (vectors a rebuild re-used): outside the rate and ETA. */
  skip(n: number): void;
  finish(message?: string): void;
  /** Stops the heartbeat without a final line (the work failed or stopped); nothing after `finish`. */
  close(): void;
}

/** A progress bar's state, as listeners of `watchProgress` receive it. */
export interface ProgressEvent {
  label: string;
  done: number;
  total?: number;
  /** Seconds left at the current rate, when the total is known and work has started. */
  etaSeconds?: number;
  finished: boolean;
}

const watchers = new Set<(e: ProgressEvent) => void>();

/**
 * Calls `listener` with every progress bar's updates in this process (at most
 * every 250 ms per bar, and on finish), e.g. so a server can report a first-run
 * build's state while it runs. Returns the function that stops it.
 */
export function watchProgress(listener: (e: ProgressEvent) => void): () => void {
  watchers.add(listener);
  return () => watchers.delete(listener);
}

export function createProgress(opts: ProgressOptions): Progress {
  const stream = opts.stream ?? process.stderr;
  const enabled = opts.enabled ?? true;
  const tty = Boolean(stream.isTTY);
  const interval = opts.intervalMs ?? (tty ? 200 : 5000);
  const heartbeat = opts.heartbeatMs ?? (tty ? HEARTBEAT_MS.tty : HEARTBEAT_MS.plain);
  const scale = opts.scale ?? 1;
  const unit = opts.unit ?? '';
  const start = performance.now();
  const initial = opts.initial ?? 0;
  let done = initial;
  // work counted as done that this run did not do (resumed, re-used): left out of the rate
  let given = initial;
  let lastDraw = 0;
  let extraText: string | (() => string) = '';

  const render = (final: boolean): string => {
    const secs = (performance.now() - start) / 1000;
    const rate = secs > 0 ? (done - given) / secs : 0;
    const parts = [opts.label];
    if (opts.total && opts.total > 0) {
      const frac = Math.min(1, Math.max(0, done / opts.total));
      const width = 24;
      const filled = Math.round(frac * width);
      parts.push(`[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(frac * 100).toFixed(1)}%`);
      parts.push(`${formatCount(done / scale)}/${formatCount(opts.total / scale)}`);
      if (!final && rate > 0) parts.push(`ETA ${formatDuration((opts.total - done) / rate)}`);
    } else {
      parts.push(formatCount(done / scale));
    }
    parts.push(`${formatCount(rate / scale)} ${unit}/s`.trim());
    parts.push(final ? `in ${formatDuration(secs)}` : `${formatDuration(secs)} so far`);
    const extra = typeof extraText === 'function' ? extraText() : extraText;
    if (extra) parts.push(extra);
    return parts.join('  ');
  };

  let lastEmit = 0;
  const emit = (final: boolean): void => {
    if (watchers.size === 0) return;
    const now = performance.now();
    if (!final && now - lastEmit < 250) return;
    lastEmit = now;
    const secs = (now - start) / 1000;
    const rate = secs > 0 ? (done - given) / secs : 0;
    const e: ProgressEvent = { label: opts.label, done, finished: final };
    if (opts.total !== undefined) e.total = opts.total;
    if (!final && opts.total && rate > 0) e.etaSeconds = Math.max(0, (opts.total - done) / rate);
    for (const w of watchers) w(e);
  };

  const draw = (final: boolean, force = false): void => {
    emit(final);
    if (!enabled) return;
    const now = performance.now();
    if (opts.quietMs !== undefined && lastDraw === 0 && now - start < opts.quietMs) return;
    if (!final && !force && now - lastDraw < interval) return;
    lastDraw = now;
    const line = render(final);
    if (tty) stream.write(`\r\x1b[2K${line}${final ? '\n' : ''}`);
    else stream.write(`${line}\n`);
  };

  // the heartbeat: a bar whose work is counted rarely (a window of long passages) still speaks
  let beat: NodeJS.Timeout | undefined = setInterval(
    () => {
      if (performance.now() - lastDraw >= heartbeat - 50) draw(false, true);
      else emit(false);
    },
    Math.min(heartbeat, 1000),
  );
  beat.unref();
  // watchers (a server's list_corpora, /ready) hear of the phase the moment it starts, not a beat later
  emit(false);
  const stopBeat = (): void => {
    clearInterval(beat);
    beat = undefined;
  };

  return {
    update(value: number, extra?: string | (() => string)) {
      done = value;
      if (extra !== undefined) extraText = extra;
      draw(false);
    },
    tick(n = 1) {
      done += n;
      draw(false);
    },
    skip(n: number) {
      done += n;
      given += n;
      draw(false);
    },
    finish(message?: string) {
      if (!beat) return;
      stopBeat();
      if (message !== undefined) extraText = message;
      draw(true);
    },
    close() {
      if (!beat) return;
      stopBeat();
      // a redrawn terminal line is ended, so the next message starts on a line of its own
      if (enabled && tty && lastDraw > 0) stream.write('\n');
    },
  };
}

/**
 * Runs `work` under a bar of its own, finished when the work is and closed
 * if it fails: a step that cannot count its own progress (an fsync) still
 * shows, every heartbeat, that it is alive and for how long. Nothing is
 * drawn for a step done within a second.
 */
export async function underProgress<T>(opts: ProgressOptions, work: (p: Progress) => Promise<T>): Promise<T> {
  const p = createProgress({ quietMs: 1000, ...opts });
  try {
    const out = await work(p);
    if (opts.total !== undefined) p.update(opts.total);
    p.finish();
    return out;
  } finally {
    p.close();
  }
}

export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return '?';
  if (Math.abs(n) >= 1e9) return `${(n / 1e9).toFixed(2)}G`;
  if (Math.abs(n) >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (Math.abs(n) >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  if (Number.isInteger(n)) return String(n);
  return n.toFixed(1);
}

export function formatDuration(secs: number): string {
  if (!Number.isFinite(secs) || secs < 0) return '?';
  if (secs < 59.95) return `${secs.toFixed(1)}s`;
  // rounded once, to the unit shown, then split: 419.6 s is 7m00s, never 6m60s
  const whole = Math.round(secs);
  if (whole < 3600) return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, '0')}s`;
  const minutes = Math.round(secs / 60);
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}

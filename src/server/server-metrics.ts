import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * A small Prometheus registry (text exposition format 0.0.4): counters,
 * gauges and histograms with labels. No dependency, no background work.
 */
type Labels = Record<string, string>;

function labelKey(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}="${escapeLabel(labels[k] as string)}"`)
    .join(',');
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

interface Metric {
  render(): string;
}

export class Counter implements Metric {
  private readonly values = new Map<string, number>();
  /** A source read at render time instead of inc(): counters kept elsewhere (the result cache). */
  source: (() => number) | undefined;

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(labels: Labels = {}, by = 1): void {
    const k = labelKey(labels);
    this.values.set(k, (this.values.get(k) ?? 0) + by);
  }

  get(labels: Labels = {}): number {
    return this.values.get(labelKey(labels)) ?? 0;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    if (this.source) lines.push(`${this.name} ${this.source()}`);
    else if (this.values.size === 0) lines.push(`${this.name} 0`);
    for (const [k, v] of this.values) lines.push(`${this.name}${k ? `{${k}}` : ''} ${v}`);
    return lines.join('\n');
  }
}

export class Gauge implements Metric {
  private readonly values = new Map<string, number>();
  /** Values read at render time, each with its labels (sizes kept elsewhere: caches, connections). */
  collect: (() => ReadonlyArray<readonly [Labels, number]>) | undefined;

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  set(value: number, labels: Labels = {}): void {
    this.values.set(labelKey(labels), value);
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    for (const [labels, v] of this.collect?.() ?? []) {
      const k = labelKey(labels);
      lines.push(`${this.name}${k ? `{${k}}` : ''} ${v}`);
    }
    for (const [k, v] of this.values) lines.push(`${this.name}${k ? `{${k}}` : ''} ${v}`);
    return lines.join('\n');
  }
}

export class Histogram implements Metric {
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {}

  observe(value: number, labels: Labels = {}): void {
    const k = labelKey(labels);
    let s = this.series.get(k);
    if (!s) {
      s = { counts: new Array<number>(this.buckets.length).fill(0), sum: 0, count: 0 };
      this.series.set(k, s);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= (this.buckets[i] as number)) (s.counts[i] as number)++;
    s.sum += value;
    s.count++;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [k, s] of this.series) {
      const sep = k ? `${k},` : '';
      this.buckets.forEach((b, i) => lines.push(`${this.name}_bucket{${sep}le="${b}"} ${s.counts[i]}`));
      lines.push(`${this.name}_bucket{${sep}le="+Inf"} ${s.count}`);
      lines.push(`${this.name}_sum${k ? `{${k}}` : ''} ${s.sum}`);
      lines.push(`${this.name}_count${k ? `{${k}}` : ''} ${s.count}`);
    }
    return lines.join('\n');
  }
}

export class Registry {
  private readonly metrics: Metric[] = [];

  counter(name: string, help: string): Counter {
    return this.add(new Counter(name, help));
  }

  gauge(name: string, help: string): Gauge {
    return this.add(new Gauge(name, help));
  }

  histogram(name: string, help: string, buckets: readonly number[]): Histogram {
    return this.add(new Histogram(name, help, buckets));
  }

  render(): string {
    return `${this.metrics.map((m) => m.render()).join('\n')}\n`;
  }

  private add<T extends Metric>(m: T): T {
    this.metrics.push(m);
    return m;
  }
}

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const STAGE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/**
 * The server's metrics, created once per process and shared by every
 * transport. Label values are always ours (routes, modes, error codes, cache
 * names), never a client's string: each distinct label is a series kept for
 * the life of the process.
 */
export function createServerMetrics() {
  const r = new Registry();
  const rss = r.gauge('process_resident_memory_bytes', 'Resident memory of the server process.');
  rss.collect = () => [[{}, process.memoryUsage().rss]];
  // how late the event loop ran its timers, sampled every 10 ms, over the process's life: what a
  // /health check or a new request waited for at worst, measured inside the server
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const loopDelay = r.gauge('nodejs_eventloop_delay_seconds', 'Event-loop delay since start, by quantile.');
  loopDelay.collect = () =>
    [0.5, 0.99, 1].map((q): [Labels, number] => [
      { quantile: String(q) },
      (q === 1 ? loop.max : loop.percentile(q * 100)) / 1e9,
    ]);
  return {
    registry: r,
    requests: r.counter('retriever_requests_total', 'Requests handled, by route, mode and outcome.'),
    errors: r.counter('retriever_errors_total', 'Requests that failed, by route and error code.'),
    latency: r.histogram('retriever_request_duration_seconds', 'Request latency, by route and mode.', LATENCY_BUCKETS),
    encoderBatch: r.histogram('retriever_encoder_batch_size', 'Query texts per encoder batch.', BATCH_BUCKETS),
    // where a request's time goes: read (the body), encode (the query vectors: tokenize, run, pool and
    // hop, the round trip to the encoder thread, inside it), bm25, dense, materialize, write
    stage: r.histogram('retriever_stage_seconds', 'Time spent in each step of a search request.', STAGE_BUCKETS),
    encoderQueue: r.gauge('retriever_encoder_queue_depth', 'Query texts waiting for the encoder.'),
    inFlight: r.gauge('retriever_inflight_requests', 'Requests being served now.'),
    cacheHits: r.counter('retriever_cache_hits_total', 'Result cache hits.'),
    cacheMisses: r.counter('retriever_cache_misses_total', 'Result cache misses.'),
    rejected: r.counter('retriever_rejected_total', 'Requests refused with 503 because the server was full.'),
    cacheBytes: r.gauge('retriever_cache_bytes', 'Estimated heap held by each cache (results, vectors, filters).'),
    cacheEntries: r.gauge('retriever_cache_entries', 'Entries in each cache.'),
    connections: r.gauge('retriever_open_connections', 'Open HTTP connections.'),
    evictedConnections: r.counter(
      'retriever_evicted_connections_total',
      'Idle HTTP connections closed to stay under --max-connections.',
    ),
    sessions: r.gauge('retriever_mcp_sessions', 'Open MCP sessions (Streamable HTTP and SSE).'),
    rss,
  };
}

export type ServerMetrics = ReturnType<typeof createServerMetrics>;

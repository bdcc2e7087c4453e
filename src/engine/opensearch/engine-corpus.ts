import { setTimeout as delay } from 'node:timers/promises';
import type { ScoredHit } from '../../core/top-k.js';
import { describeError, RetrieverError } from '../../errors.js';
import type { Manifest } from '../../index/manifest.js';
import type { EngineArms, EngineCorpus, EngineQuery } from '../../search/served-corpus.js';
import type { SearchMode } from '../../search/types.js';
import type { ChunkRecord, Facets } from '../../store/chunk-store.js';
import { NO_FACETS } from '../../store/facets.js';
import { silentLogger, type Logger } from '../../util/log.js';
import type { EngineClient } from './client.js';
import {
  aliasFor,
  CATALOGUE,
  dotFromScore,
  filterClauses,
  HIT_FIELDS,
  toChunkRecord,
  unitVector,
  type CatalogueEntry,
  type ChunkSource,
} from './schema.js';

/**
 * How long a search keeps retrying answers with failed shards (a node going
 * down mid-request) by default: until the cluster has promoted the replicas,
 * which on a loaded machine takes seconds when the killed node was the cluster
 * manager (a new one is elected first). A server passes its request deadline
 * (`--deadline-ms`) instead: retrying past the 504 helps nobody, and short of
 * it a slow failover costs time, not answers. Backoff doubles from 50 ms up to
 * 5 s, each wait drawn from its upper half, so that 256 clients do not retry in
 * step against a cluster still electing a manager. A shard with no copy left
 * (a red cluster) fails every retry; the error then names the engine's reason.
 */
export const SHARD_RETRY_MS = 60_000;
const SHARD_BACKOFF_MAX_MS = 5000;
/** Failed-shard answers are logged at most once in this many ms (with how many there were). */
const SHARD_NOTICE_MS = 5000;

/** `say(count, last)` at most once per `ms`: how many events there were since, and the last one's reason. */
function everyFewSeconds(ms: number, say: (count: number, last: string) => void): (reason: string) => void {
  let count = 0;
  let at = -Infinity;
  return (reason) => {
    count++;
    const now = Date.now();
    if (now - at < ms) return;
    say(count, reason);
    count = 0;
    at = now;
  };
}
/** /ready's probe of the engine: one request, answered within this, reused for a second. */
const PROBE_TIMEOUT_MS = 2000;
const PROBE_CACHE_MS = 1000;

/** `probe`, run at most once per `ms` (concurrent callers share the run in flight). */
function probeEvery(ms: number, probe: () => Promise<string | undefined>): () => Promise<string | undefined> {
  let last: { at: number; result: Promise<string | undefined> } | undefined;
  return () => {
    const now = Date.now();
    if (!last || now - last.at >= ms) last = { at: now, result: probe() };
    return last.result;
  };
}

interface Reason {
  type?: string;
  reason?: string;
}

interface SearchBody {
  hits: { hits: Array<{ _score: number; _source: ChunkSource }>; total?: { value: number } };
  _shards?: { failed?: number; failures?: Array<{ reason?: Reason }> };
  error?: Reason & { root_cause?: Reason[]; failed_shards?: Array<{ reason?: Reason }> };
  status?: number;
}

/** What an answer with failed shards says went wrong: the error, then the first shard's cause. */
function shardFailure(r: SearchBody): string {
  const said = (x: Reason | undefined) => [x?.type, x?.reason].filter((v) => v).join(': ');
  const e = r.error;
  const shard =
    e?.failed_shards?.find((f) => said(f.reason))?.reason ?? r._shards?.failures?.find((f) => said(f.reason))?.reason;
  const parts = [said(e), said(shard ?? e?.root_cause?.[0])].filter((v, i, all) => v && all.indexOf(v) === i);
  const status = r.status ? ` (status ${r.status})` : '';
  return parts.length > 0 ? `${parts.join('; ')}${status}` : `${r._shards?.failed ?? 'some'} shards failed${status}`;
}

/** The hint that ends every "not in the engine" message. */
function pushHint(name: string, location: string): string {
  return `push it with \`retriever-mcp build --name ${name} --backend ${location}\` (after building it locally)`;
}

/**
 * Opens corpus `name` in the engine: its catalogue record must say the push
 * completed, and the index must hold as many chunks as the manifest.
 */
export async function openEngineCorpus(
  client: EngineClient,
  name: string,
  efSearch: number | undefined,
  shardRetryMs = SHARD_RETRY_MS,
  log: Logger = silentLogger,
): Promise<EngineCorpus> {
  try {
    return await open(client, name, efSearch, shardRetryMs, log);
  } catch (err) {
    await client.close();
    throw err;
  }
}

async function open(
  client: EngineClient,
  name: string,
  efSearch: number | undefined,
  shardRetryMs: number,
  log: Logger,
): Promise<EngineCorpus> {
  const entry = await readCatalogue(client, name);
  if (!entry) {
    const have = await listEngineCorpora(client);
    throw new RetrieverError(
      'INDEX_MISSING',
      `no corpus ${name} in the engine at ${client.location} (it holds ${have.length > 0 ? have.join(', ') : 'none'}): ${pushHint(name, client.location)}`,
    );
  }
  if (entry.state !== 'ready') {
    throw new RetrieverError(
      'INDEX_MISSING',
      `the push of ${name} to ${client.location} stopped at ${entry.pushed} of ${entry.chunks} chunks: run \`retriever-mcp build --name ${name} --backend ${client.location}\` again to resume it`,
    );
  }
  let manifest: Manifest;
  try {
    manifest = JSON.parse(entry.manifest) as Manifest;
  } catch (err) {
    throw new RetrieverError(
      'INDEX_CORRUPT',
      `the engine's record of ${name} holds no readable manifest: ${pushHint(name, client.location)}`,
      {
        cause: err,
      },
    );
  }
  const alias = aliasFor(name);
  // the alias must serve this corpus's own index: a corpus whose name differs only in case, pushed by
  // an older version, would have moved it to its own passages
  const { status: aliasStatus, body: targets } = await client.request<Record<string, unknown>>({
    method: 'GET',
    path: `/_alias/${alias}`,
    allow: [404],
  });
  const serving = aliasStatus === 200 ? Object.keys(targets) : [];
  if (!serving.includes(entry.index)) {
    throw new RetrieverError(
      'INDEX_CORRUPT',
      `${alias} on ${client.location} points at ${serving.join(', ') || 'nothing'}, not at ${entry.index}, the index of ${name}'s last push ` +
        `(another corpus whose name differs only in case shares the alias?): ${pushHint(name, client.location)}`,
    );
  }
  const { body: count } = await client.request<{ count: number }>({ method: 'GET', path: `/${alias}/_count` });
  if (count.count !== manifest.corpus.chunks) {
    throw new RetrieverError(
      'INDEX_CORRUPT',
      `${alias} on ${client.location} holds ${count.count} chunks but the manifest says ${manifest.corpus.chunks}: ${pushHint(name, client.location)}`,
    );
  }
  const facets = await readFacets(client, alias);
  const modes: SearchMode[] = manifest.dense ? ['hybrid', 'dense', 'bm25'] : ['bm25'];
  const ann = manifest.dense?.ann;
  const ef = efSearch ?? (ann?.library === 'usearch' ? ann.expansion_search : undefined) ?? 100;
  // what a failover looks like from here, at most once every few seconds: a retry storm is one line
  const retried = everyFewSeconds(SHARD_NOTICE_MS, (count, reason) =>
    log.warn(
      `${name} on ${client.location}: ${count} answer(s) with failed shards (${reason}); each is retried until its deadline`,
    ),
  );
  return {
    kind: 'engine',
    name,
    manifest,
    modes,
    location: client.location,
    facets: () => facets,
    searchArms: (q) => searchArms(client, alias, q, ef, shardRetryMs, retried),
    unreachable: probeEvery(PROBE_CACHE_MS, async () => {
      try {
        await client.request({ method: 'HEAD', path: `/${alias}`, probeMs: PROBE_TIMEOUT_MS });
        return undefined;
      } catch (err) {
        return describeError(err);
      }
    }),
    getChunksById: async (ids) => {
      const hits = await search(client, alias, { size: ids.length, query: { terms: { id: [...ids] } } });
      const byId = new Map(hits.map((h) => [h.id, h]));
      return ids.map((id) => byId.get(id)).filter((r): r is ChunkRecord => r !== undefined);
    },
    getDocumentRange: (docId, from, to) =>
      search(client, alias, {
        size: Math.max(0, Math.min(to, 10_000) - Math.max(0, from) + 1),
        query: {
          bool: { filter: [{ term: { doc_id: docId } }, { range: { position: { gte: Math.max(0, from), lte: to } } }] },
        },
        sort: [{ position: 'asc' }],
      }),
    getDocumentChunks: (docId, limit) =>
      search(client, alias, { size: limit, query: { term: { doc_id: docId } }, sort: [{ position: 'asc' }] }),
    close: () => client.close(),
  };
}

export async function readCatalogue(client: EngineClient, name: string): Promise<CatalogueEntry | undefined> {
  const { status, body } = await client.request<{ found?: boolean; _source?: CatalogueEntry }>({
    method: 'GET',
    path: `/${CATALOGUE}/_doc/${encodeURIComponent(name)}`,
    allow: [404],
  });
  return status === 404 || !body.found ? undefined : body._source;
}

/** The names of the corpora pushed to the engine (complete or not). */
export async function listEngineCorpora(client: EngineClient): Promise<string[]> {
  const { status, body } = await client.request<{ hits?: { hits: Array<{ _id: string }> } }>({
    method: 'GET',
    path: `/${CATALOGUE}/_search`,
    body: { size: 1000, _source: false, sort: [{ name: 'asc' }] },
    allow: [404],
  });
  return status === 404 ? [] : (body.hits?.hits ?? []).map((h) => h._id);
}

/**
 * Both arms in one _msearch round trip (and a count of the filter's matches
 * when there is a filter). Partial answers are refused by the engine and
 * retried here, so a node that dies mid-request costs time, not results.
 */
async function searchArms(
  client: EngineClient,
  alias: string,
  q: EngineQuery,
  efSearch: number,
  retryMs: number,
  retried: (reason: string) => void,
): Promise<EngineArms> {
  const filter = filterClauses(q.filter);
  const bodies: Array<Record<string, unknown>> = [];
  const order: Array<'bm25' | 'dense' | 'count'> = [];
  const header = { index: alias, allow_partial_search_results: false };
  if (q.arms.includes('bm25')) {
    order.push('bm25');
    // global term statistics: the same BM25 scores however the chunks are spread over shards
    bodies.push(
      { ...header, search_type: 'dfs_query_then_fetch' },
      {
        size: q.depth,
        _source: HIT_FIELDS,
        query: { bool: { must: { match: { contents: q.text } }, filter } },
      },
    );
  }
  if (q.arms.includes('dense')) {
    if (!q.vector) throw new RetrieverError('INTERNAL', 'a dense search came without its query vector');
    order.push('dense');
    const knn: Record<string, unknown> = {
      vector: unitVector(q.vector),
      k: q.depth,
      method_parameters: { ef_search: Math.max(efSearch, q.depth) },
    };
    if (filter.length > 0) knn['filter'] = { bool: { filter } };
    bodies.push(header, { size: q.depth, _source: HIT_FIELDS, query: { knn: { vector: knn } } });
  }
  if (filter.length > 0) {
    order.push('count');
    bodies.push(header, { size: 0, track_total_hits: true, query: { bool: { filter } } });
  }
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    const { body } = await client.request<{ responses: SearchBody[] }>({
      method: 'POST',
      path: '/_msearch',
      ndjson: bodies,
    });
    const failed = body.responses.find((r) => r.error || (r._shards?.failed ?? 0) > 0);
    if (failed) {
      retried(shardFailure(failed));
      const cap = Math.min(50 * 2 ** attempt, SHARD_BACKOFF_MAX_MS);
      const wait = cap / 2 + Math.random() * (cap / 2); // jitter: retries of many clients spread out
      if (Date.now() - started + wait <= retryMs) {
        await delay(wait);
        continue;
      }
      throw new RetrieverError(
        'ENGINE',
        `the engine at ${client.location} could not search every shard of ${alias} ` +
          `within ${retryMs / 1000} s: ${shardFailure(failed)}; check the cluster's health (GET /_cluster/health)`,
      );
    }
    const out: EngineArms = { records: new Map() };
    body.responses.forEach((r, i) => {
      const arm = order[i];
      if (arm === 'count') {
        out.filterMatches = r.hits.total?.value ?? 0;
        return;
      }
      const hits: ScoredHit[] = r.hits.hits.map((h) => {
        out.records.set(h._source.num, toChunkRecord(h._source));
        return { num: h._source.num, score: arm === 'dense' ? dotFromScore(h._score) : h._score };
      });
      if (arm === 'bm25') out.bm25 = hits;
      else if (arm === 'dense') out.dense = hits;
    });
    return out;
  }
}

async function search(client: EngineClient, alias: string, body: Record<string, unknown>): Promise<ChunkRecord[]> {
  if ((body['size'] as number) <= 0) return [];
  const { body: res } = await client.request<SearchBody>({
    method: 'POST',
    path: `/${alias}/_search`,
    body: { _source: HIT_FIELDS, ...body },
  });
  return res.hits.hits.map((h) => toChunkRecord(h._source));
}

/** Sources, categories (document counts: one first chunk per document) and the date range. */
async function readFacets(client: EngineClient, alias: string): Promise<Facets> {
  const { body } = await client.request<{
    aggregations?: {
      sources: { buckets: Array<{ key: string; doc_count: number }> };
      categories: { buckets: Array<{ key: string; doc_count: number }> };
      source_labels: { buckets: Array<{ key: string; doc_count: number }> };
      category_labels: { buckets: Array<{ key: string; doc_count: number }> };
      first: { value_as_string?: string };
      last: { value_as_string?: string };
    };
  }>({
    method: 'POST',
    path: `/${alias}/_search`,
    body: {
      size: 0,
      query: { term: { position: 0 } },
      aggs: {
        sources: { terms: { field: 'source', size: 50 } },
        categories: { terms: { field: 'category', size: 50 } },
        // as written (pushes before the label fields have none: the lower-cased values then)
        source_labels: { terms: { field: 'source_label', size: 50 } },
        category_labels: { terms: { field: 'category_label', size: 50 } },
        first: { min: { field: 'published_at', format: 'yyyy-MM-dd' } },
        last: { max: { field: 'published_at', format: 'yyyy-MM-dd' } },
      },
    },
  });
  const a = body.aggregations;
  if (!a) return NO_FACETS;
  const bucket = (b: { key: string; doc_count: number }) => ({ value: b.key, documents: b.doc_count });
  const first = a.first.value_as_string;
  const last = a.last.value_as_string;
  return {
    sources: (a.source_labels.buckets.length > 0 ? a.source_labels : a.sources).buckets.map(bucket),
    categories: (a.category_labels.buckets.length > 0 ? a.category_labels : a.categories).buckets.map(bucket),
    published: first && last ? { first, last } : null,
  };
}

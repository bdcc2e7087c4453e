import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { redactSecrets, RetrieverError } from '../../errors.js';
import { VectorReader } from '../../index/dense/vectors-file.js';
import { INDEX_FILES } from '../../index/layout.js';
import { readManifest } from '../../index/manifest.js';
import { ChunkStore } from '../../store/chunk-store.js';
import type { Logger } from '../../util/log.js';
import { createProgress } from '../../util/progress.js';
import type { EngineClient } from './client.js';
import { listEngineCorpora, readCatalogue } from './engine-corpus.js';
import {
  aliasFor,
  CATALOGUE,
  CATALOGUE_BODY,
  chunkDocument,
  chunkIndexBody,
  indexFor,
  type CatalogueEntry,
  type LayoutOptions,
} from './schema.js';

export interface PushOptions extends LayoutOptions {
  /** The local index to push: indexDir/name. */
  indexDir: string;
  name: string;
  /** Chunks per _bulk request. */
  batchChunks?: number;
  progress: boolean;
  log: Logger;
  /** Stops the push between batches; the catalogue keeps how far it got, for a resume. */
  signal?: AbortSignal;
}

export interface PushReport {
  index: string;
  chunks: number;
  /** Chunks already in the engine from an earlier, interrupted push. */
  resumedAt: number;
  seconds: number;
  /** Already complete: nothing was sent. */
  upToDate: boolean;
}

/** Bulk items retried after a per-item rejection (a full queue, a shard moving). */
const ITEM_RETRIES = 5;

/**
 * Pushes a locally built corpus into the engine: chunks, metadata and
 * vectors, streamed in num order through _bulk. The catalogue records how far
 * the push got after every batch, so an interrupted push resumes there. The
 * alias moves to the new index only when every chunk is in and counted, so
 * servers keep answering from the previous build until then.
 */
export async function pushCorpus(client: EngineClient, o: PushOptions): Promise<PushReport> {
  const started = performance.now();
  const dir = join(o.indexDir, o.name);
  const manifest = readManifest(
    dir,
    `build it first with \`retriever-mcp build --name ${o.name} --input PATH --format FORMAT\``,
  );
  const store = new ChunkStore(join(dir, INDEX_FILES.store));
  const vectors = manifest.dense
    ? new VectorReader(
        join(dir, INDEX_FILES.vectors),
        manifest.dense.encoder.dim,
        manifest.dense.vectors.dtype,
        manifest.dense.vectors.count,
      )
    : null;
  const closers: Array<() => void> = [];
  try {
    await ensureCatalogue(client);
    await refuseCollisions(client, o.name);
    const total = manifest.corpus.chunks;
    const index = indexFor(o.name, manifest.build_id);
    const prior = await readCatalogue(client, o.name);
    if (prior?.build_id === manifest.build_id && prior.state === 'ready') {
      o.log.info(`${o.name}: build ${manifest.build_id} is already in ${client.location} (${prior.index})`);
      return { index, chunks: total, resumedAt: total, seconds: 0, upToDate: true };
    }
    let from = 0;
    if (prior?.build_id === manifest.build_id && prior.index === index && (await exists(client, index))) {
      from = prior.pushed;
      o.log.info(`${o.name}: resuming the push at chunk ${from} of ${total}`);
    } else {
      await client.request({ method: 'DELETE', path: `/${index}`, allow: [404] });
      await client.request({ method: 'PUT', path: `/${index}`, body: chunkIndexBody(manifest, o) });
    }
    const entry: CatalogueEntry = {
      name: o.name,
      build_id: manifest.build_id,
      state: 'pushing',
      index,
      pushed: from,
      chunks: total,
      updated_at: new Date().toISOString(),
      // readable by every reader of the cluster: a password an older build recorded is not copied there
      manifest: JSON.stringify({ ...manifest, rebuild_command: redactSecrets(manifest.rebuild_command) }),
    };
    // a pushing record for a new build leaves the serving alias (and the old record's index) alone
    if (prior && prior.state === 'ready' && prior.build_id !== manifest.build_id) {
      o.log.info(`${o.name}: ${prior.index} keeps serving until this push completes`);
    }
    await writeCatalogue(client, entry);
    const batch = o.batchChunks ?? 500;
    const bar = createProgress({ label: `push ${o.name}`, total, unit: 'chunks', enabled: o.progress, initial: from });
    closers.push(() => bar.close());
    for (let at = from; at < total; at += batch) {
      o.signal?.throwIfAborted();
      const end = Math.min(total, at + batch);
      const chunks = store.chunkRange(at, end);
      if (chunks.length !== end - at) {
        throw new RetrieverError(
          'INDEX_CORRUPT',
          `${dir}: chunks ${at}-${end - 1} are missing from the store: rebuild it`,
        );
      }
      const rows = vectors?.readRange(at, end - at);
      const dim = manifest.dense?.encoder.dim ?? 0;
      await bulkIndex(
        client,
        index,
        chunks.map((c, i) => ({
          id: String(c.num),
          doc: chunkDocument(c, rows ? rows.subarray(i * dim, (i + 1) * dim) : undefined),
        })),
      );
      entry.pushed = end;
      entry.updated_at = new Date().toISOString();
      await writeCatalogue(client, entry, false);
      bar.update(end);
    }
    bar.finish();
    await client.request({ method: 'PUT', path: `/${index}/_settings`, body: { index: { refresh_interval: '1s' } } });
    await client.request({ method: 'POST', path: `/${index}/_refresh` });
    const { body: count } = await client.request<{ count: number }>({ method: 'GET', path: `/${index}/_count` });
    if (count.count !== total) {
      throw new RetrieverError(
        'ENGINE',
        `${index} holds ${count.count} chunks after the push, not ${total}: run the push again (it resumes)`,
      );
    }
    const replaced = await pointAlias(client, o.name, index);
    entry.state = 'ready';
    entry.updated_at = new Date().toISOString();
    await writeCatalogue(client, entry);
    // the builds this one replaces: the one that served, and an unfinished push of another build
    for (const old of new Set([...replaced, ...(prior ? [prior.index] : [])])) {
      if (old !== index) await client.request({ method: 'DELETE', path: `/${old}`, allow: [404] });
    }
    return { index, chunks: total, resumedAt: from, seconds: (performance.now() - started) / 1000, upToDate: false };
  } finally {
    for (const close of closers) close();
    vectors?.close();
    store.close();
  }
}

/**
 * Index names are lower case in the engine, so `news` and `NEWS`, two
 * corpora here, would share one alias there: pushing one would move the
 * other's alias and delete its index. Refused before anything is touched.
 */
async function refuseCollisions(client: EngineClient, name: string): Promise<void> {
  const alias = aliasFor(name);
  const clash = (await listEngineCorpora(client)).filter((other) => other !== name && aliasFor(other) === alias);
  if (clash.length > 0) {
    throw new RetrieverError(
      'BAD_INPUT',
      `corpus ${name} cannot be pushed: the engine already holds ${clash.join(', ')}, and engine index names are lower case, ` +
        `so both would be ${alias}; nothing was changed. Push it under another --name (or remove ${clash.join(', ')} from the engine first)`,
    );
  }
}

async function ensureCatalogue(client: EngineClient): Promise<void> {
  if (await exists(client, CATALOGUE)) return;
  await client.request({ method: 'PUT', path: `/${CATALOGUE}`, body: CATALOGUE_BODY, allow: [400] });
}

async function exists(client: EngineClient, index: string): Promise<boolean> {
  const { status } = await client.request({ method: 'HEAD', path: `/${index}`, allow: [404] });
  return status === 200;
}

/**
 * Writes the corpus's catalogue record. Readers get it by id, which sees a
 * write at once; `visible` also waits until searches of the catalogue (the
 * list of corpora) see it, which state changes need and progress does not.
 */
async function writeCatalogue(client: EngineClient, entry: CatalogueEntry, visible = true): Promise<void> {
  await client.request({
    method: 'PUT',
    path: `/${CATALOGUE}/_doc/${encodeURIComponent(entry.name)}`,
    body: entry,
    ...(visible ? { query: { refresh: 'wait_for' } } : {}),
  });
}

/** Moves the corpus alias to `index` in one atomic alias update; returns the indexes it pointed at before. */
async function pointAlias(client: EngineClient, name: string, index: string): Promise<string[]> {
  const alias = aliasFor(name);
  const { status, body } = await client.request<Record<string, unknown>>({
    method: 'GET',
    path: `/_alias/${alias}`,
    allow: [404],
  });
  const before = status === 200 ? Object.keys(body) : [];
  const actions: Array<Record<string, unknown>> = before.map((old) => ({ remove: { index: old, alias } }));
  actions.push({ add: { index, alias } });
  await client.request({ method: 'POST', path: '/_aliases', body: { actions } });
  return before;
}

interface BulkItem {
  index?: { status: number; error?: { type?: string; reason?: string } };
}

/** One batch through _bulk; items the engine rejects for a passing reason are sent again. */
async function bulkIndex(
  client: EngineClient,
  index: string,
  docs: Array<{ id: string; doc: Record<string, unknown> }>,
): Promise<void> {
  let todo = docs;
  for (let attempt = 0; todo.length > 0; attempt++) {
    const ndjson: unknown[] = [];
    for (const d of todo) ndjson.push({ index: { _index: index, _id: d.id } }, d.doc);
    const { body } = await client.request<{ errors: boolean; items: BulkItem[] }>({
      method: 'POST',
      path: '/_bulk',
      ndjson,
    });
    if (!body.errors) return;
    const again: typeof todo = [];
    for (let i = 0; i < body.items.length; i++) {
      const r = body.items[i]?.index;
      if (!r?.error) continue;
      // 429: queue full; 503: shard unavailable while a node leaves or joins
      if ((r.status === 429 || r.status >= 500) && attempt < ITEM_RETRIES) again.push(todo[i] as (typeof todo)[number]);
      else {
        throw new RetrieverError(
          'ENGINE',
          `the engine refused chunk ${todo[i]?.id} of ${index}: ${r.error.type ?? ''} ${r.error.reason ?? ''}`.trim(),
        );
      }
    }
    if (again.length > 0) await delay(200 * 2 ** attempt);
    todo = again;
  }
}

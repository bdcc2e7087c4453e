import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  createReadStream,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { RetrieverError } from '../errors.js';
import { cachedPath, fetchHubFile, type HubConfig, type HubFile } from '../hub/download.js';
import { CORPUS_FORMATS, type CorpusFormat } from '../core/contracts.js';

/** A corpus recipe from corpora/*.json (see corpora/README.md). */
export interface HubRef {
  repo_type: 'model' | 'dataset';
  repo: string;
  revision: string;
  path: string;
}

export interface Preset {
  name: string;
  title: string;
  format: CorpusFormat;
  /** Where the corpus file is on the Hugging Face Hub; a preset whose file is elsewhere has `source` instead. */
  corpus?: HubRef;
  /** A corpus file only its publisher serves: where to download it, to pass as --input. */
  source?: { url: string; file: string; size: string };
  queries?: { file: HubRef; format: string };
  vectors?: {
    repo_type: 'model' | 'dataset';
    repo: string;
    revision: string;
    parts: string[];
    format: string;
    model: string;
  };
  chunk_size: number;
  chunk_overlap: number;
  top_k: number;
  notes?: string;
}

/** corpora/ at the package root, from dist/src/presets or src/presets. */
export function presetsDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const rel of ['../../../corpora', '../../corpora']) {
    const dir = join(here, rel);
    if (existsSync(join(dir, 'multihop.json'))) return dir;
  }
  throw new RetrieverError('INTERNAL', `corpus recipes not found near ${here}: the package is incomplete`);
}

export function listPresets(): string[] {
  return readdirSync(presetsDir())
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -5))
    .sort();
}

export function getPreset(name: string): Preset | undefined {
  if (!listPresets().includes(name)) return undefined;
  const path = join(presetsDir(), `${name}.json`);
  const p = JSON.parse(readFileSync(path, 'utf8')) as Preset;
  if (
    p.name !== name ||
    !(CORPUS_FORMATS as readonly string[]).includes(p.format) ||
    ((!p.corpus?.repo || !p.corpus.path) && !p.source?.url)
  ) {
    throw new RetrieverError(
      'INTERNAL',
      `corpus recipe ${path} is malformed (name, format and a corpus or source are required)`,
    );
  }
  return p;
}

function hubFile(ref: HubRef): HubFile {
  return { repoType: ref.repo_type, repo: ref.repo, revision: ref.revision, path: ref.path };
}

/** The hub file behind a preset's corpus or query file, if it has one. */
export function presetHubFile(p: Preset, which: 'corpus' | 'queries'): HubFile | undefined {
  const ref = which === 'corpus' ? p.corpus : p.queries?.file;
  return ref ? hubFile(ref) : undefined;
}

/** Downloads (or finds in the cache) a preset's corpus or query file. */
export async function fetchPresetFile(p: Preset, which: 'corpus' | 'queries', hub: HubConfig): Promise<string> {
  const ref = which === 'corpus' ? p.corpus : p.queries?.file;
  if (!ref && which === 'corpus' && p.source) {
    throw new RetrieverError(
      'BAD_INPUT',
      `preset ${p.name}'s corpus is not on the Hugging Face Hub: download ${p.source.file} (${p.source.size}) from ${p.source.url} and pass it with --input PATH`,
    );
  }
  if (!ref)
    throw new RetrieverError(
      'BAD_INPUT',
      `preset ${p.name} has no ${which} file; pass it with --${which === 'corpus' ? 'input' : 'queries'}`,
    );
  if (hub.offline && !cachedPath(hub.cacheDir, hubFile(ref))) {
    throw new RetrieverError(
      'DOWNLOAD',
      `--offline: preset ${p.name} needs ${ref.repo}/${ref.path} (${ref.repo_type} on the Hugging Face Hub), which is not in ${hub.cacheDir}; download it there or pass --${which === 'corpus' ? 'input' : 'queries'} PATH`,
    );
  }
  return fetchHubFile(hub, hubFile(ref));
}

/**
 * Downloads a preset's vector file parts and concatenates them once into the
 * cache (Search-R1 splits e5_Flat.index in two), returning the whole file.
 */
export async function fetchPresetVectors(p: Preset, hub: HubConfig): Promise<string> {
  const v = p.vectors;
  if (!v)
    throw new RetrieverError(
      'BAD_INPUT',
      `preset ${p.name} publishes no vectors; omit --import-vectors to encode the corpus`,
    );
  const out = join(hub.cacheDir, 'retriever-mcp', p.name, `vectors.${v.format === 'faiss' ? 'index' : v.format}`);
  if (existsSync(out)) return out;
  const parts: string[] = [];
  for (const path of v.parts) {
    const ref = { repo_type: v.repo_type, repo: v.repo, revision: v.revision, path };
    if (hub.offline && !cachedPath(hub.cacheDir, hubFile(ref))) {
      throw new RetrieverError('DOWNLOAD', `--offline: preset ${p.name} needs ${v.repo}/${path} in ${hub.cacheDir}`);
    }
    parts.push(await fetchHubFile(hub, hubFile(ref)));
  }
  mkdirSync(dirname(out), { recursive: true });
  const tmp = `${out}.partial`;
  const ws = createWriteStream(tmp);
  for (const part of parts) await pipeline(createReadStream(part), ws, { end: false });
  await new Promise<void>((resolve, reject) => ws.end((err?: Error | null) => (err ? reject(err) : resolve())));
  renameSync(tmp, out);
  return out;
}

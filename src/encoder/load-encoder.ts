import { existsSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { RetrieverError } from '../errors.js';
import { fetchRepoFiles, repoCacheDir, type HubConfig, type HubFile } from '../hub/download.js';
import { hashFile } from '../util/hash-file.js';
import type { EncoderSource } from '../core/contracts.js';
import type { Pooling } from './embed-core.js';
import { DEFAULT_MODEL, E5_PROMPTS, familyPooling, familyPrompts, ONNX_CONVERSIONS } from './model-ids.js';
import { resolveModelDir, SENTENCE_TRANSFORMERS_FILES, variantFile, type ModelFiles } from './model-files.js';
import { knownShape, shapeMismatches, type ShapeFacts } from './model-shapes.js';
import { MAX_CONFIG_BYTES, MAX_TOKENIZER_BYTES, readModelJson } from './read-model-file.js';
import type { EncoderHostKind } from './encoder-host.js';
import { OnnxEncoder } from './onnx-encoder.js';
import type { Device } from './onnx-session.js';
import { own } from '../util/own.js';

/** What the user asked for: a hub model id, or a local directory in the HF ONNX layout. */
export interface EncoderChoice {
  /** The model's name (hub id); also what is fetched unless `hubRepo` is set. */
  model: string;
  /** The hub repository to download from (an ONNX conversion of `model`). */
  hubRepo?: string;
  /**
   * The commit an index's files were taken at (its manifest's source): when
   * the cache holds them, no request reaches the hub; otherwise that commit,
   * not whatever `revision` names today, is downloaded.
   */
  pinnedCommit?: string;
  modelPath?: string;
  variant: string;
  revision: string;
  device: Device;
  threads: number;
  batchSize: number;
  /** Padded ÷ real tokens an encoder batch may reach (default MAX_PADDING_RATIO). */
  maxPadding?: number;
  /** Fuse attention when the graph allows it (fast-session.ts); default true. */
  fuseAttention?: boolean;
  /** Where the session runs (OnnxEncoderOptions.host): a build's encoder runs in a process a stop can kill. */
  host?: EncoderHostKind;
  /** The settings below default to what the model's own files say (`encoderSettingsFor`). */
  maxLength?: number;
  pooling?: Pooling;
  queryPrefix?: string;
  passagePrefix?: string;
}

/** The settings that shape a vector, as `openEncoder` will use them. */
export interface VectorSettings {
  maxLength: number;
  pooling: Pooling;
  queryPrefix: string;
  passagePrefix: string;
}

/**
 * Each setting comes from the flag when one was given, else from the model's
 * sentence-transformers files, else from its family (`familyPrompts`), else
 * from e5's conventions (the default model's): mean pooling (CLS for bge), 512 tokens and
 * the `query: ` / `passage: ` prefixes.
 */
export function encoderSettingsFor(choice: EncoderChoice, files: ModelFiles, name: string): VectorSettings {
  const st = files.sentenceTransformers;
  const family = familyPrompts(name);
  const prompts = st
    ? { query: st.queryPrompt ?? family?.query ?? '', passage: st.passagePrompt ?? family?.passage ?? '' }
    : (family ?? E5_PROMPTS);
  return {
    maxLength: Math.min(choice.maxLength ?? st?.maxSeqLength ?? E5_MAX_LENGTH, files.maxPositions),
    pooling: choice.pooling ?? st?.pooling ?? familyPooling(name) ?? 'mean',
    queryPrefix: choice.queryPrefix ?? prompts.query,
    passagePrefix: choice.passagePrefix ?? prompts.passage,
  };
}

/** e5's window, used when neither a flag nor the model's files name one. */
const E5_MAX_LENGTH = 512;

export interface ResolvedModel {
  files: ModelFiles;
  source: EncoderSource;
  sha256: string;
}

/** The hub files a choice downloads (none for a local directory); the sentence-transformers ones are optional. */
export function modelHubFiles(choice: EncoderChoice): HubFile[] {
  if (choice.modelPath) return [];
  const repo = hubRepoOf(choice);
  return ['config.json', 'tokenizer.json', variantFile(choice.variant)].map((path) => ({
    repoType: 'model' as const,
    repo,
    revision: choice.revision,
    path,
  }));
}

/** Finds (downloading if needed) the model files for `choice`. */
export async function resolveModel(choice: EncoderChoice, hub: HubConfig): Promise<ResolvedModel> {
  if (choice.modelPath) {
    const dir = resolve(choice.modelPath);
    const files = resolveModelDir(dir, choice.variant);
    // a directory given without --model is named after itself, as openEncoder names it
    checkModelShape([choice.model === DEFAULT_MODEL ? basename(dir) : choice.model], files.config, files.tokenizer);
    return { files, source: { kind: 'local', path: dir }, sha256: modelSha256(files.onnx) };
  }
  const repo = hubRepoOf(choice);
  const want = ['config.json', 'tokenizer.json', variantFile(choice.variant)];
  const pinned = choice.pinnedCommit;
  // an index's own model, pinned to a commit whose files are all cached: the hub is never asked
  const snapshot = pinned ? join(repoCacheDir(hub.cacheDir, { repoType: 'model', repo }), 'snapshots', pinned) : '';
  const cached = pinned !== undefined && want.every((p) => existsSync(join(snapshot, p)));
  let dir = snapshot;
  if (!cached) {
    const revision = pinned ?? choice.revision;
    const file = (path: string): HubFile => ({ repoType: 'model', repo, revision, path });
    // the sentence-transformers files say how vectors are pooled and prompted; many ONNX repositories lack them
    // config.json and tokenizer.json come first: a model file that is not this model's is refused
    // before its hundreds of megabytes are downloaded
    const got = new Map<string, string>();
    const { required } = await fetchRepoFiles(hub, want.map(file), SENTENCE_TRANSFORMERS_FILES.map(file), (f, p) => {
      got.set(f.path, p);
      if (f.path === 'tokenizer.json') checkModelShape([choice.model, repo], got.get('config.json'), p);
    });
    // the snapshot directory (named by its commit) holds all three files
    dir = dirname(required[0] as string);
  }
  const files = resolveModelDir(dir, choice.variant);
  if (cached) checkModelShape([choice.model, repo], files.config, files.tokenizer);
  const commit = basename(dir);
  return {
    files,
    source: { kind: 'hub', repo, revision: choice.revision, ...(/^[0-9a-f]{40}$/.test(commit) ? { commit } : {}) },
    sha256: modelSha256(files.onnx),
  };
}

/**
 * Refuses a model whose config.json or tokenizer.json contradicts the known
 * shape of the model it is named as (model-shapes.ts), naming the file and
 * each mismatch. Unknown models pass: their own files describe them.
 */
function checkModelShape(names: readonly string[], configPath?: string, tokenizerPath?: string): void {
  const shape = knownShape(names);
  if (!shape) return;
  const facts: Array<[string, ShapeFacts]> = [];
  if (configPath) {
    const c = readModelJson(configPath, MAX_CONFIG_BYTES) as Record<string, unknown>;
    const n = (k: string): number | undefined => (typeof c?.[k] === 'number' ? (c[k] as number) : undefined);
    facts.push([configPath, { hidden: n('hidden_size'), vocab: n('vocab_size'), layers: n('num_hidden_layers') }]);
  }
  if (tokenizerPath) {
    const t = readModelJson(tokenizerPath, MAX_TOKENIZER_BYTES) as { model?: { vocab?: object } } | null;
    const vocab = t?.model?.vocab;
    if (vocab && typeof vocab === 'object') facts.push([tokenizerPath, { vocab: Object.keys(vocab).length }]);
  }
  for (const [path, f] of facts) {
    const bad = shapeMismatches(shape, f);
    if (bad.length === 0) continue;
    throw new RetrieverError(
      'MODEL',
      `${path} does not describe ${names[0]}: ${bad.join(', ')}. The mirror, cache or download that gave it is not that ` +
        `model's: delete the cached copy (or check HF_ENDPOINT), or pass a model of your own with --model-path DIR --model NAME`,
    );
  }
}

/** The hub repository a choice downloads from: its own, else the known ONNX conversion of the model, else the model id. */
export function hubRepoOf(choice: Pick<EncoderChoice, 'hubRepo' | 'model'>): string {
  return choice.hubRepo ?? own(ONNX_CONVERSIONS, choice.model) ?? choice.model;
}

export async function openEncoder(
  choice: EncoderChoice,
  hub: HubConfig,
): Promise<{ encoder: OnnxEncoder; source: EncoderSource }> {
  const m = await resolveModel(choice, hub);
  const model = choice.modelPath && choice.model === DEFAULT_MODEL ? basename(m.files.dir) : choice.model;
  const settings = encoderSettingsFor(choice, m.files, model);
  const encoder = await OnnxEncoder.open({
    model,
    files: m.files,
    modelSha256: m.sha256,
    tokenizerSha256: hashFile(m.files.tokenizer),
    device: choice.device,
    threads: choice.threads,
    batchSize: choice.batchSize,
    maxPadding: choice.maxPadding,
    fuseAttention: choice.fuseAttention ?? true,
    ...(choice.host ? { host: choice.host } : {}),
    ...settings,
  });
  return { encoder, source: m.source };
}

const shaMemo = new Map<string, string>();

/**
 * sha256 of the ONNX file. Hub cache blobs are named by their sha256 (LFS
 * ETag), so those cost nothing; other files are hashed once per process.
 */
export function modelSha256(path: string): string {
  const real = realpathSync(path);
  const name = basename(real);
  if (/^[0-9a-f]{64}$/.test(name) && basename(dirname(real)) === 'blobs') return name;
  const st = statSync(real);
  const key = `${real}:${st.size}:${st.mtimeMs}`;
  const memo = shaMemo.get(key);
  if (memo) return memo;
  const digest = hashFile(real);
  shaMemo.set(key, digest);
  return digest;
}

/**
 * What an encoder is, for the start-up line: its dimension and pooling, the
 * graph it runs, and, for a model of no known family, that its own files set
 * them (nothing here could check them).
 */
export function describeEncoder(e: OnnxEncoder): string {
  const s = e.settings;
  const unknown = knownShape([s.model]) ? '' : '; not a model this server knows: its own files set both';
  return `dim ${e.dim}, ${s.pooling} pooling${unknown}; graph: ${e.graph}`;
}

export function sourceLabel(s: EncoderSource): string {
  return s.kind === 'local' ? s.path : `${s.repo}@${s.revision}`;
}

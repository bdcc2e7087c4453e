import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { Encoder } from '../encoder/encoder.js';
import { describeEncoder, openEncoder, sourceLabel, type EncoderChoice } from '../encoder/load-encoder.js';
import { variantFile } from '../encoder/model-files.js';
import type { Device } from '../encoder/onnx-session.js';
import { RetrieverError } from '../errors.js';
import type { HubConfig } from '../hub/download.js';
import type { DenseManifest } from '../index/manifest.js';
import type { ServedCorpus } from '../search/served-corpus.js';
import { fixHintFor } from '../search/open-corpus.js';
import type { Logger } from '../util/log.js';
import { shellQuote } from '../util/shell-quote.js';

export interface EncoderFlags {
  /** Explicit model choice; by default each index's own encoder (from its manifest) is loaded. */
  model?: string;
  modelPath?: string;
  variant?: string;
  device: Device;
  threads: number;
  batchSize: number;
  /** Padded ÷ real tokens an encoder batch may reach (default MAX_PADDING_RATIO). */
  maxPadding?: number;
  /** Fuse attention when the graph allows it (fast-session.ts); default true. */
  fuseAttention?: boolean;
  /** Load no query encoder (`--no-encoder`): dense search by query vectors only. */
  none?: boolean;
}

/**
 * Opens one encoder per distinct encoder among the served dense indexes and
 * checks each index against it: same model file (sha256), dimension,
 * prefixes, pooling and max length, or the server refuses to start.
 */
export async function openCorpusEncoders(
  corpora: readonly ServedCorpus[],
  flags: EncoderFlags,
  hub: HubConfig,
  log: Logger,
): Promise<{ encoders: Map<string, Encoder>; all: Encoder[] }> {
  const groups = new Map<string, { choice: EncoderChoice; corpora: ServedCorpus[] }>();
  for (const c of corpora) {
    if (!c.manifest.dense || flags.none) continue;
    checkNamedModel(c, flags);
    const choice = choiceFor(c.manifest.dense, flags);
    const key = JSON.stringify(choice);
    const g = groups.get(key) ?? { choice, corpora: [] };
    g.corpora.push(c);
    groups.set(key, g);
  }
  // a first build's text phase has no dense arm yet: its model is used once the vectors are in
  const waiting = corpora.some((c) => c.kind === 'local' && c.pending);
  if (groups.size === 0 && !waiting && (flags.modelPath !== undefined || flags.model !== undefined))
    unusedModel(flags, log);
  const encoders = new Map<string, Encoder>();
  const all: Encoder[] = [];
  try {
    for (const { choice, corpora: members } of groups.values()) {
      const { encoder, source } = await openEncoder(choice, hub);
      all.push(encoder);
      log.info(`encoder ${encoder.id} from ${sourceLabel(source)} on ${choice.device} (${describeEncoder(encoder)})`);
      for (const c of members) {
        checkCompatible(c, encoder, flags);
        encoders.set(c.name, encoder);
      }
    }
  } catch (err) {
    await Promise.all(all.map((e) => e.close()));
    throw err;
  }
  return { encoders, all };
}

/** A model named for indexes that have no dense arm: a path that does not exist is an error, any other a warning. */
function unusedModel(flags: EncoderFlags, log: Logger): void {
  if (flags.modelPath !== undefined && !existsSync(flags.modelPath)) {
    throw new RetrieverError(
      'BAD_INPUT',
      `--model-path ${flags.modelPath} does not exist (and no served index has a dense arm, so no model is needed: leave the flag out)`,
    );
  }
  log.warn(
    `${flags.modelPath !== undefined ? '--model-path' : '--model'} is not used: no served index has a dense arm (built with --no-dense)`,
  );
}

/** The index's rebuild command with the model flags the server was given in place of its own. */
function rebuildWith(c: ServedCorpus, flags: EncoderFlags): string {
  const base = c.manifest.rebuild_command;
  if (!base) return fixHintFor(c.name, c.manifest);
  const stripped = base.replace(/\s--(model|model-path|model-variant)(=|\s+)('[^']*'|\S+)/g, '');
  const model = [
    ...(flags.model !== undefined ? [`--model ${shellQuote(flags.model)}`] : []),
    ...(flags.modelPath !== undefined ? [`--model-path ${shellQuote(flags.modelPath)}`] : []),
    ...(flags.variant !== undefined ? [`--model-variant ${shellQuote(flags.variant)}`] : []),
  ].join(' ');
  return `rebuild it with \`${stripped} ${model}\``;
}

function choiceFor(m: DenseManifest, flags: EncoderFlags): EncoderChoice {
  const e = m.encoder;
  // naming the index's own model (`--model intfloat/e5-base-v2` in a host's config) is not asking for another
  const own =
    flags.model === undefined || flags.model === e.model || (e.source.kind === 'hub' && flags.model === e.source.repo);
  const explicit = !own || flags.modelPath !== undefined;
  const choice: EncoderChoice = {
    // a --model-path without --model is named after its directory, as a build names it
    model: flags.modelPath
      ? (flags.model ?? basename(resolve(flags.modelPath)))
      : own
        ? e.model
        : (flags.model as string),
    variant: flags.variant ?? e.variant,
    revision: e.source.kind === 'hub' && !explicit ? e.source.revision : 'main',
    device: flags.device,
    threads: flags.threads,
    batchSize: flags.batchSize,
    maxPadding: flags.maxPadding,
    fuseAttention: flags.fuseAttention,
    maxLength: e.max_length,
    pooling: e.pooling,
    queryPrefix: e.query_prefix,
    passagePrefix: e.passage_prefix,
  };
  if (flags.modelPath) choice.modelPath = flags.modelPath;
  else if (!explicit && e.source.kind === 'local') choice.modelPath = e.source.path;
  else if (!explicit && e.source.kind === 'hub') {
    choice.hubRepo = e.source.repo;
    // the index's own model at the commit it was built from: no hub request when the cache has it
    const sameVariant = flags.variant === undefined || variantFileOrUndefined(flags.variant) === e.variant;
    if (e.source.commit !== undefined && sameVariant) choice.pinnedCommit = e.source.commit;
  }
  return choice;
}

/**
 * A hub model or variant named on the command line that is not the index's
 * own is refused before anything is downloaded (a model file can be hundreds
 * of megabytes); a local --model-path is checked by its sha256 after loading.
 */
function checkNamedModel(c: ServedCorpus, flags: EncoderFlags): void {
  const e = (c.manifest.dense as DenseManifest).encoder;
  if (flags.modelPath !== undefined) return;
  const own = [e.model, ...(e.source.kind === 'hub' ? [e.source.repo] : [])];
  const problems: string[] = [];
  if (flags.model !== undefined && !own.includes(flags.model)) problems.push(`--model ${flags.model}`);
  const variant = flags.variant !== undefined ? variantFileOrUndefined(flags.variant) : e.variant;
  if (variant !== e.variant) problems.push(`--model-variant ${flags.variant} (${variant ?? 'unknown'})`);
  if (problems.length === 0) return;
  throw new RetrieverError(
    'INDEX_INCOMPATIBLE',
    `index ${c.name} was built with ${e.model} (${e.variant}, dim ${e.dim}) but the server was started with ${problems.join(' and ')}; nothing was downloaded. ` +
      `To serve it with the model you asked for, ${rebuildWith(c, flags)}; or start the server without --model/--model-variant to use the index's own model`,
  );
}

function variantFileOrUndefined(v: string): string | undefined {
  try {
    return variantFile(v);
  } catch {
    return undefined;
  }
}

function checkCompatible(c: ServedCorpus, enc: Encoder, flags: EncoderFlags): void {
  const m = (c.manifest.dense as DenseManifest).encoder;
  const s = enc.settings;
  const problems: string[] = [];
  if (m.dim !== s.dim) problems.push(`dimension ${m.dim} vs ${s.dim}`);
  if (m.model_sha256 !== s.modelSha256)
    problems.push(`model file sha256 ${m.model_sha256.slice(0, 12)}… vs ${s.modelSha256.slice(0, 12)}…`);
  // indexes built before the tokenizer was recorded are checked by the model file alone
  if (m.tokenizer_sha256 !== undefined && m.tokenizer_sha256 !== s.tokenizerSha256)
    problems.push(`tokenizer.json sha256 ${m.tokenizer_sha256.slice(0, 12)}… vs ${s.tokenizerSha256.slice(0, 12)}…`);
  if (m.query_prefix !== s.queryPrefix || m.passage_prefix !== s.passagePrefix) problems.push('prefixes differ');
  if (m.pooling !== s.pooling) problems.push(`pooling ${m.pooling} vs ${s.pooling}`);
  if (m.max_length !== s.maxLength) problems.push(`max_length ${m.max_length} vs ${s.maxLength}`);
  if (problems.length > 0) {
    throw new RetrieverError(
      'INDEX_INCOMPATIBLE',
      `index ${c.name} was built with ${m.id} (dim ${m.dim}) but the server loaded ${enc.id} (dim ${s.dim}): ${problems.join('; ')}. ` +
        `To serve it with the model you asked for, ${rebuildWith(c, flags)}; or start the server without --model/--model-path to use the index's own model`,
    );
  }
}

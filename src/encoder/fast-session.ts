import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { fuseAttention } from './fuse-attention.js';
import type { ModelFiles } from './model-files.js';
import { OnnxSession, type SessionOptions } from './onnx-session.js';
import type { WordPieceTokenizer } from './wordpiece.js';

/** How close the fused graph's token vectors must be to the file's own: float32 rounding, not a change of meaning. */
export const FUSED_MIN_COSINE = 0.99999;

export interface OpenedSession {
  session: OnnxSession;
  /** What runs, for the start-up log: "fused attention (12 layers)" or "as published (why)". */
  graph: string;
  /**
   * The graph quantizes its activations per run (DynamicQuantizeLinear: one scale for the whole
   * batch, the published int8 files): a text's vector then depends on the texts it is run with.
   */
  quantizesPerRun: boolean;
}

/**
 * Whether an ONNX file quantizes activations per run: its op types are plain
 * bytes in the protobuf. Read a megabyte at a time: reading it whole kept a
 * third copy of the model in memory until the next collection.
 */
function quantizesPerRun(path: string): boolean {
  const needle = Buffer.from('DynamicQuantizeLinear');
  const buf = Buffer.alloc(1 << 20);
  const fd = openSync(path, 'r');
  try {
    let keep = 0;
    for (;;) {
      const n = readSync(fd, buf, keep, buf.length - keep, null);
      if (n === 0) return false;
      const end = keep + n;
      if (buf.subarray(0, end).includes(needle)) return true;
      // the last bytes start the next window, so a name split across two reads is still found
      keep = Math.min(needle.length - 1, end);
      buf.copy(buf, 0, end - keep, end);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * The model's session, with its attention fused (fuse-attention.ts) when the
 * graph allows it and the fused graph gives the same token vectors as the
 * file on a probe batch (two texts of different lengths, so padding and the
 * mask are exercised). Otherwise the file as published, and the reason.
 *
 * The file's session answers the probe and is closed before the fused graph
 * loads (it is opened again only if the fused one fails): two models open at
 * once left the process holding about one model's size more for good.
 */
export async function openFastSession(
  files: ModelFiles,
  opts: SessionOptions,
  tokenizer: WordPieceTokenizer,
  fuse: boolean,
): Promise<OpenedSession> {
  const opened = await openGraph(files, opts, tokenizer, fuse);
  return { ...opened, quantizesPerRun: quantizesPerRun(files.onnx) };
}

async function openGraph(
  files: ModelFiles,
  opts: SessionOptions,
  tokenizer: WordPieceTokenizer,
  fuse: boolean,
): Promise<Omit<OpenedSession, 'quantizesPerRun'>> {
  const plain = await OnnxSession.create(files.onnx, opts);
  if (!fuse) return { session: plain, graph: 'as published (--no-fuse-attention)' };
  if (files.numHeads === undefined)
    return { session: plain, graph: 'as published (config.json gives no num_attention_heads)' };
  const probe = probeBatch(tokenizer, files.maxPositions);
  const output = plain.outputNames.includes('last_hidden_state')
    ? 'last_hidden_state'
    : (plain.outputNames[0] as string);
  // the fusion is only a speed-up: whatever goes wrong on its way, the file as published serves
  let reference: Float32Array;
  try {
    reference = (await plain.run(probe.ids, probe.mask, probe.rows.length, probe.seqLen, output)).data;
  } catch (err) {
    return { session: plain, graph: `as published (the probe did not run: ${(err as Error).message})` };
  }
  let fused: ReturnType<typeof fuseAttention>;
  try {
    fused = fuseAttention(readFileSync(files.onnx), files.numHeads);
  } catch (err) {
    return { session: plain, graph: `as published (the attention rewrite failed: ${(err as Error).message})` };
  }
  if ('reason' in fused) return { session: plain, graph: `as published (${fused.reason})` };
  await plain.close();
  const reopen = async (why: string, candidate?: OnnxSession): Promise<Omit<OpenedSession, 'quantizesPerRun'>> => {
    await candidate?.close().catch(() => undefined);
    return { session: await OnnxSession.create(files.onnx, opts), graph: `as published (${why})` };
  };
  let candidate: OnnxSession;
  try {
    candidate = await OnnxSession.create(fused.bytes, opts);
  } catch (err) {
    return reopen(`the fused graph did not load: ${(err as Error).message}`);
  }
  let cosine: number;
  try {
    const ours = await candidate.run(probe.ids, probe.mask, probe.rows.length, probe.seqLen, output);
    cosine = worstTokenCosine(reference, ours.data, probe);
  } catch (err) {
    return reopen(`the fused graph did not run: ${(err as Error).message}`, candidate);
  }
  if (!(cosine >= FUSED_MIN_COSINE)) return reopen(`the fused graph disagreed: cosine ${cosine.toFixed(6)}`, candidate);
  return { session: candidate, graph: `fused attention (${fused.layers} layers)` };
}

interface Probe {
  rows: number[][];
  seqLen: number;
  ids: BigInt64Array;
  mask: BigInt64Array;
}

/** Two texts of different lengths, padded into one batch. */
function probeBatch(tokenizer: WordPieceTokenizer, maxPositions: number): Probe {
  const texts = [
    'query: how many layers does a small encoder have?',
    `passage: ${'Padding and the attention mask must change nothing for the shorter text. '.repeat(12)}`,
  ];
  const rows = texts.map((t) => tokenizer.encode(t, Math.min(128, maxPositions)).ids);
  const seqLen = Math.max(...rows.map((r) => r.length));
  const ids = new BigInt64Array(rows.length * seqLen);
  const mask = new BigInt64Array(rows.length * seqLen);
  rows.forEach((r, i) =>
    r.forEach((id, t) => {
      ids[i * seqLen + t] = BigInt(id);
      mask[i * seqLen + t] = 1n;
    }),
  );
  return { rows, seqLen, ids, mask };
}

/** The lowest cosine between two outputs' vectors of any real (unpadded) token of the probe. */
function worstTokenCosine(x: Float32Array, y: Float32Array, probe: Probe): number {
  if (x.length !== y.length) return -1;
  const dim = x.length / (probe.rows.length * probe.seqLen);
  let worst = 1;
  probe.rows.forEach((r, i) => {
    for (let t = 0; t < r.length; t++) {
      const at = (i * probe.seqLen + t) * dim;
      let dot = 0;
      let nx = 0;
      let ny = 0;
      for (let d = 0; d < dim; d++) {
        const u = x[at + d] as number;
        const v = y[at + d] as number;
        dot += u * v;
        nx += u * u;
        ny += v * v;
      }
      worst = Math.min(worst, dot / Math.sqrt(nx * ny || 1));
    }
  });
  return worst;
}

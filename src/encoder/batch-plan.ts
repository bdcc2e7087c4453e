// No ONNX Runtime import here: the main thread reads the default, the encoder thread plans batches.

/**
 * How much padding a batch may carry: its padded size (rows × longest row) at
 * most this many times its real tokens. See `planBatches`.
 */
export const MAX_PADDING_RATIO = 1.1;

/**
 * Cuts texts, sorted by token count (ascending), into encoder batches: a
 * batch closes when it holds `batchSize` texts, or when the next (longer)
 * text would pad it past `maxPadding` × its real tokens. On a CPU a forward
 * pass costs about its padded tokens, so a batch of mixed lengths padded to
 * its longest wastes the difference (real questions run 9 to 155 tokens: one
 * padded batch of 56 ran at half the rate of 56 single runs); short texts of
 * similar length still go together. Returns the batches' end offsets.
 */
export function planBatches(sortedLengths: readonly number[], batchSize: number, maxPadding: number): number[] {
  const ends: number[] = [];
  let start = 0;
  let tokens = 0;
  for (let i = 0; i < sortedLengths.length; i++) {
    const len = sortedLengths[i] as number;
    const rows = i - start + 1;
    if (rows > 1 && (rows > batchSize || rows * len > maxPadding * (tokens + len))) {
      ends.push(i);
      start = i;
      tokens = 0;
    }
    tokens += len;
  }
  if (sortedLengths.length > 0) ends.push(sortedLengths.length);
  return ends;
}

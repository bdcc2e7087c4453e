import { readBlocks } from './byte-source.js';
import type { ReadOptions } from './types.js';

/**
 * Yields the lines of a (possibly gzipped) text file without holding more
 * than one block plus one line in memory. `lineNo` is 1-based for messages.
 */
export async function* readLines(
  path: string,
  opts: ReadOptions = {},
): AsyncGenerator<{ line: string; lineNo: number }> {
  let carry: Buffer | undefined;
  let lineNo = 0;
  for await (const block of readBlocks(path, opts)) {
    const buf = carry ? Buffer.concat([carry, block]) : block;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      if (nl < 0) break;
      lineNo++;
      const end = nl > start && buf[nl - 1] === 0x0d ? nl - 1 : nl;
      yield { line: buf.toString('utf8', start, end), lineNo };
      start = nl + 1;
    }
    carry = start < buf.length ? buf.subarray(start) : undefined;
    // copy so the large block can be freed while we wait for the rest of a long line
    if (carry && carry.length < buf.length / 4) carry = Buffer.from(carry);
  }
  if (carry && carry.length > 0) {
    lineNo++;
    yield { line: carry.toString('utf8'), lineNo };
  }
}

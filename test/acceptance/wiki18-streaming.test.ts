import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readCorpus } from '../../src/ingest/readers.js';
import { collectGarbage } from '../helpers/heap.js';
import { makeTempDir } from '../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);
const LINES = 2_000_000;

async function writeGenerated(path: string): Promise<void> {
  const ws = createWriteStream(path);
  for (let i = 0; i < LINES; i++) {
    const line = `{"id": "${i}", "contents": "\\"Title ${i}\\"\\nPassage number ${i} with a little text."}\n`;
    if (!ws.write(line)) await new Promise<void>((r) => ws.once('drain', () => r()));
  }
  await new Promise<void>((r) => ws.end(() => r()));
}

describe('wiki18 reader at scale', () => {
  it('streams a 2M-line file with flat memory', async () => {
    const path = join(tmp.dir, 'wiki.jsonl');
    await writeGenerated(path);
    let n = 0;
    let heapAt200k = 0;
    let maxHeap = 0;
    for await (const doc of readCorpus('wiki18', path)) {
      n++;
      if (n % 100_000 === 0) {
        // heapUsed also counts garbage not yet collected, which varies with the machine's load
        collectGarbage();
        const heap = process.memoryUsage().heapUsed;
        if (n === 200_000) heapAt200k = heap;
        if (n > 200_000) maxHeap = Math.max(maxHeap, heap);
      }
      if (n === LINES) expect(doc.id).toBe(String(LINES - 1));
    }
    expect(n).toBe(LINES);
    // holding all 2M documents would take hundreds of MB; streaming keeps a few read buffers
    expect(maxHeap - heapAt200k).toBeLessThan(32 * 2 ** 20);
  }, 180_000);
});

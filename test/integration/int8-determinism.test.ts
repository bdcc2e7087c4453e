import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openEncoder } from '../../src/encoder/load-encoder.js';
import { silentLogger } from '../../src/util/log.js';
import { writeDynamicInt8Model } from '../helpers/slow-model.js';
import { HAS_SHARED, makeTempDir } from '../helpers/paths.js';

// Issue 49, item 4: the published int8 files quantize activations with one scale per run, so a
// query's vector depended on the strangers micro-batched with it (the same query could rank
// differently under load than alone). A graph of that kind (DynamicQuantizeLinear → MatMulInteger)
// runs each query alone; builds keep their batches, planned the same way every time.
const tmp = makeTempDir();
afterAll(tmp.cleanup);

const bytes = (v: Float32Array): string => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');

describe.skipIf(!HAS_SHARED)('a query vector from a graph that quantizes per run', () => {
  it('is the same bytes alone and in any batch of strangers', async () => {
    const dir = writeDynamicInt8Model(join(tmp.dir, 'int8'));
    const { encoder } = await openEncoder(
      {
        model: 'int8-per-run',
        modelPath: dir,
        variant: 'fp32',
        revision: 'main',
        device: 'cpu',
        threads: 1,
        batchSize: 32,
      },
      { endpoint: '', cacheDir: '', offline: true, log: silentLogger, progress: false },
    );
    try {
      const q = 'who directed the film about the river king';
      // of about its length, so that they share its batch; zebra's token id is far above the query's
      const strangers = [
        'zebra zebra zebra zebra zebra zebra zebra zebra zebra',
        'what is the capital of the country of the river',
        'who wrote the book about the ocean and the city',
      ];
      const [alone] = await encoder.embedQueries([q]);
      for (const batch of [
        [q, ...strangers],
        [...strangers, q],
        [strangers[1] as string, q],
      ]) {
        const vs = await encoder.embedQueries(batch);
        expect(bytes(vs[batch.indexOf(q)] as Float32Array)).toBe(bytes(alone as Float32Array));
      }
      // the graph itself does depend on its batch: passages, run together, are not the same bytes
      const [passageAlone] = await encoder.embedPassages([q]);
      const passages = await encoder.embedPassages([q, ...strangers]);
      expect(bytes(passages[0] as Float32Array)).not.toBe(bytes(passageAlone as Float32Array));
    } finally {
      await encoder.close();
    }
  });
});

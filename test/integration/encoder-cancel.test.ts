import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Encoder } from '../../src/encoder/encoder.js';
import { openTinyEncoder } from '../helpers/encoder.js';
import { HAS_SHARED } from '../helpers/paths.js';

// A build hands one AbortSignal to every window it embeds (thousands at wiki-18's size): each
// request's listener must go when the request settles, and an abort must stop the thread's work.
describe.skipIf(!HAS_SHARED)('encoder requests with a stop signal (real ONNX session on its thread)', () => {
  let encoder: Encoder;
  beforeAll(async () => {
    encoder = await openTinyEncoder();
  });
  afterAll(async () => encoder?.close());

  it('leaves no listener on the signal once each request is answered', async () => {
    const stop = new AbortController();
    for (let i = 0; i < 20; i++) await encoder.embedPassages([`passage ${i}`, 'another one'], stop.signal);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });

  it('rejects with the signal’s reason when stopped, and leaves no listener', async () => {
    const stop = new AbortController();
    const texts = Array.from({ length: 4000 }, (_, i) => `a longer passage number ${i} ${'word '.repeat(50)}`);
    const pending = encoder.embedPassages(texts, stop.signal);
    stop.abort(new Error('stopped by the test'));
    await expect(pending).rejects.toThrow('stopped by the test');
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    // the encoder serves on
    expect(await encoder.embedPassages(['still here'])).toHaveLength(1);
  });
});

import { describe, expect, it } from 'vitest';
import { builtFileUrl } from '../../../src/util/built-file.js';

describe('builtFileUrl', () => {
  it('names a built file next to a module in dist/, and in dist/ for its source under src/', () => {
    const rel = '../../../wasm/term-counter.wasm';
    expect(builtFileUrl(rel, 'file:///p/dist/src/index/bm25/term-counter.js').href).toBe(
      'file:///p/dist/wasm/term-counter.wasm',
    );
    expect(builtFileUrl(rel, 'file:///p/src/index/bm25/term-counter.ts').href).toBe(
      'file:///p/dist/wasm/term-counter.wasm',
    );
    expect(builtFileUrl('./bm25-worker.js', 'file:///p/src/index/bm25/bm25-builder.ts').href).toBe(
      'file:///p/dist/src/index/bm25/bm25-worker.js',
    );
  });
});

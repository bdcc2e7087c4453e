import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ChunkStore } from '../../../src/store/chunk-store.js';
import { ChunkStoreWriter } from '../../../src/store/chunk-store-writer.js';
import { makeTempDir } from '../../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

/** A document count that crosses a commit (every 20,000 rows) and leaves a partial insert group. */
const DOCS = 10_037;

describe('ChunkStoreWriter', () => {
  it('stores every document and chunk it is given, with their fields, in number order', () => {
    const path = join(tmp.dir, 'all.sqlite');
    const writer = new ChunkStoreWriter(path);
    for (let d = 0; d < DOCS; d++) {
      const docNum = writer.addDocument({
        id: `doc-${d}`,
        title: `Title ${d}`,
        metadata: d % 3 === 0 ? { source: `s${d % 7}` } : null,
      });
      expect(docNum).toBe(d);
      for (let p = 0; p < 1 + (d % 2); p++) {
        writer.addChunk({
          id: `doc-${d}#${p}`,
          docNum,
          position: p,
          contents: `Title ${d}\nbody ${d} part ${p} ✓`,
          bodyStart: `Title ${d}\n`.length,
          nTokens: d + p,
        });
      }
    }
    writer.finishIngest();
    writer.close();

    const store = new ChunkStore(path);
    try {
      const chunks = DOCS + Math.floor(DOCS / 2);
      expect(store.counts()).toMatchObject({ documents: DOCS, chunks });
      let num = 0;
      for (let d = 0; d < DOCS; d++) {
        for (let p = 0; p < 1 + (d % 2); p++) {
          const c = store.getChunk(num++);
          expect(c).toMatchObject({
            id: `doc-${d}#${p}`,
            docId: `doc-${d}`,
            position: p,
            title: `Title ${d}`,
            text: `body ${d} part ${p} ✓`,
            nTokens: d + p,
          });
          if (d % 3 === 0) expect(c?.metadata).toEqual({ source: `s${d % 7}` });
          else expect(c?.metadata).toBeUndefined();
        }
      }
      expect(num).toBe(chunks);
      expect(store.getChunk(chunks)).toBeUndefined();
    } finally {
      store.close();
    }
  });

  it('keeps rows still waiting for a full insert group when the writer is closed', () => {
    const path = join(tmp.dir, 'few.sqlite');
    const writer = new ChunkStoreWriter(path);
    for (let d = 0; d < 3; d++) {
      const docNum = writer.addDocument({ id: `d${d}`, title: '' });
      writer.addChunk({ id: `d${d}`, docNum, position: 0, contents: `text ${d}`, bodyStart: 0, nTokens: 2 });
    }
    writer.close();
    const store = new ChunkStore(path);
    try {
      expect(store.counts()).toMatchObject({ documents: 3, chunks: 3 });
      expect(store.getChunk(2)?.contents).toBe('text 2');
    } finally {
      store.close();
    }
  });

  it('names a duplicate id when the id indexes are built', () => {
    const writer = new ChunkStoreWriter(join(tmp.dir, 'dup.sqlite'));
    try {
      for (const id of ['a', 'b', 'a']) {
        const docNum = writer.addDocument({ id, title: id });
        writer.addChunk({ id: `${id}-${docNum}`, docNum, position: 0, contents: id, bodyStart: 0, nTokens: 1 });
      }
      expect(() => writer.finishIngest()).toThrow(/duplicate document id "a"/);
    } finally {
      writer.close();
    }
  });
});

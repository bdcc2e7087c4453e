import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ChunkStore, type ChunkRecord, type FilterSpec } from '../../../src/store/chunk-store.js';
import { ChunkStoreWriter } from '../../../src/store/chunk-store-writer.js';
import { CREATE_INDEXES_V1, CREATE_TABLES_V1 } from '../../../src/store/schema.js';
import { openDatabase } from '../../../src/store/sqlite.js';
import { makeTempDir } from '../../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

interface Doc {
  id: string;
  source: string;
  chunks: string[];
}

/** Whole documents (chunk id = document id), split ones (`<id>#<position>`), an empty one, a split one last. */
const DOCS: Doc[] = [
  { id: 'alpha', source: 's1', chunks: ['alpha'] },
  { id: 'beta', source: 's2', chunks: ['beta#0', 'beta#1', 'beta#2'] },
  { id: 'empty', source: 's2', chunks: [] },
  { id: 'gamma#x', source: 's1', chunks: ['gamma#x'] },
  { id: 'mixed', source: 's3', chunks: ['mixed', 'mixed#1'] },
  { id: 'delta', source: 's3', chunks: ['delta#0', 'delta#1'] },
];

function writeStore(name: string, docs: Doc[]): string {
  const path = join(tmp.dir, `${name}.sqlite`);
  const writer = new ChunkStoreWriter(path);
  try {
    for (const d of docs) {
      const docNum = writer.addDocument({ id: d.id, title: d.id.toUpperCase(), metadata: { source: d.source } });
      d.chunks.forEach((id, position) =>
        writer.addChunk({ id, docNum, position, contents: `text of ${id}`, bodyStart: 0, nTokens: 3 }),
      );
    }
    writer.finishIngest();
  } finally {
    writer.close();
  }
  return path;
}

/** The same documents in schema 1 (index format 1), as its writer laid them out. */
function writeSchema1Store(name: string, docs: Doc[]): string {
  const path = join(tmp.dir, `${name}.sqlite`);
  const db = openDatabase(path, { readonly: false });
  try {
    db.exec(CREATE_TABLES_V1);
    db.prepare("INSERT INTO meta (key, value) VALUES ('schema_version', '1')").run();
    const doc = db.prepare('INSERT INTO documents (num, id, title, metadata) VALUES (?, ?, ?, ?)');
    const chunk = db.prepare('INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?)');
    let num = 0;
    docs.forEach((d, docNum) => {
      doc.run(docNum, d.id, d.id.toUpperCase(), JSON.stringify({ source: d.source }));
      d.chunks.forEach((id, position) => chunk.run(num++, id, docNum, position, `text of ${id}`, 0, 3));
    });
    db.exec(CREATE_INDEXES_V1);
  } finally {
    db.close();
  }
  return path;
}

function indexNames(path: string): string[] {
  const db = openDatabase(path, { readonly: true });
  try {
    return db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'")
      .pluck()
      .all() as string[];
  } finally {
    db.close();
  }
}

const brief = (chunks: ChunkRecord[]): string[] => chunks.map((c) => `${c.num}:${c.id}@${c.docId}/${c.position}`);

/** Everything the read API answers about DOCS and a few ids and documents that do not exist. */
function answers(store: ChunkStore): Record<string, unknown> {
  const ids = [
    ...DOCS.flatMap((d) => d.chunks),
    'beta#3',
    'beta#01',
    'alpha#0',
    'delta#2',
    'empty',
    'nope',
    'mixed#0',
    '',
  ];
  const docIds = [...DOCS.map((d) => d.id), 'nope'];
  const filters: FilterSpec[] = [
    { doc_id: ['beta', 'delta', 'empty'] },
    { doc_id: ['delta'] },
    { source: ['s1'] },
    { source: ['s3'] },
    { doc_id: ['nope'] },
    {},
  ];
  return {
    byId: ids.map((id) => {
      const c = store.getChunkById(id);
      return c ? brief([c])[0] : `${id}: none`;
    }),
    all: docIds.map((d) => brief(store.getDocumentChunks(d, 100))),
    first: docIds.map((d) => brief(store.getDocumentChunks(d, 1))),
    ranges: docIds.flatMap((d) =>
      [
        [-1, 1],
        [1, 10],
        [2, 2],
        [5, 9],
        [1, 0],
      ].map(([from, to]) => brief(store.getDocumentRange(d, from as number, to as number))),
    ),
    filters: filters.map((f) => [...store.filterChunkNums(f)]),
  };
}

describe('ChunkStore lookups', () => {
  it('finds chunks by id, by document and position, and by filter through the document id index alone', () => {
    const path = writeStore('derived', DOCS);
    expect(indexNames(path)).toEqual(['documents_id']);
    const store = new ChunkStore(path);
    try {
      expect(store.getMeta('chunk_ids')).toBe('derived');
      let num = 0;
      for (const d of DOCS) {
        d.chunks.forEach((id, position) => {
          expect(store.getChunkById(id)).toMatchObject({
            num: num++,
            id,
            docId: d.id,
            position,
            title: d.id.toUpperCase(),
          });
        });
        expect(store.getDocumentChunks(d.id, 100).map((c) => c.id)).toEqual(d.chunks);
      }
      const a = answers(store);
      expect((a['byId'] as string[]).slice(-8)).toEqual([
        'beta#3: none',
        'beta#01: none',
        'alpha#0: none',
        'delta#2: none',
        'empty: none',
        'nope: none',
        'mixed#0: none',
        ': none',
      ]);
      expect(store.getDocumentRange('beta', -1, 1).map((c) => c.position)).toEqual([0, 1]);
      expect(store.getDocumentRange('beta', 1, 10).map((c) => c.position)).toEqual([1, 2]);
      expect(store.getDocumentRange('delta', 1, 5).map((c) => c.id)).toEqual(['delta#1']);
      expect(store.getDocumentRange('beta', 5, 9)).toEqual([]);
      expect(store.getDocumentChunks('empty', 10)).toEqual([]);
      expect(store.getDocumentChunks('beta', 2).map((c) => c.id)).toEqual(['beta#0', 'beta#1']);
      expect([...store.filterChunkNums({ doc_id: ['beta', 'delta', 'empty'] })]).toEqual([1, 2, 3, 7, 8]);
      expect([...store.filterChunkNums({ source: ['s1'] })]).toEqual([0, 4]);
      expect([...store.filterChunkNums({})]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    } finally {
      store.close();
    }
  });

  it('answers a schema-1 store (index format 1, indexed by chunk id and position) exactly as a schema-2 one', () => {
    const v1 = new ChunkStore(writeSchema1Store('v1', DOCS));
    const v2 = new ChunkStore(writeStore('v2', DOCS));
    try {
      expect(answers(v1)).toEqual(answers(v2));
    } finally {
      v1.close();
      v2.close();
    }
  });

  it('indexes chunk ids that could collide or that are not derived from the document id, and finds them', () => {
    const looksSplit: Doc[] = [
      { id: 'a', source: 's', chunks: ['a#0', 'a#1'] },
      { id: 'b#7', source: 's', chunks: ['b#7'] },
    ];
    const own: Doc[] = [
      { id: 'a', source: 's', chunks: ['first', 'second'] },
      { id: 'b', source: 's', chunks: ['third'] },
    ];
    for (const [name, docs] of [
      ['looks-split', looksSplit],
      ['own-ids', own],
    ] as const) {
      const path = writeStore(name, docs);
      expect(indexNames(path).sort()).toEqual(['chunks_id', 'documents_id']);
      const store = new ChunkStore(path);
      try {
        expect(store.getMeta('chunk_ids')).toBe('indexed');
        let num = 0;
        for (const d of docs) for (const id of d.chunks) expect(store.getChunkById(id)?.num).toBe(num++);
        expect(store.getChunkById('a#2')).toBeUndefined();
      } finally {
        store.close();
      }
    }
  });

  it('names a document whose id collides with a split document chunk', () => {
    expect(() =>
      writeStore('collide', [
        { id: 'a', source: 's', chunks: ['a#0', 'a#1'] },
        { id: 'a#1', source: 's', chunks: ['a#1'] },
      ]),
    ).toThrow(/duplicate chunk id "a#1" .*a document with id "a#1" collides with one: rename that document/);
  });

  it('refuses a chunk that does not follow its document in position order', () => {
    const writer = new ChunkStoreWriter(join(tmp.dir, 'order.sqlite'));
    try {
      const a = writer.addDocument({ id: 'a', title: '' });
      writer.addChunk({ id: 'a#0', docNum: a, position: 0, contents: 'x', bodyStart: 0, nTokens: 1 });
      expect(() =>
        writer.addChunk({ id: 'a#2', docNum: a, position: 2, contents: 'x', bodyStart: 0, nTokens: 1 }),
      ).toThrow(/chunk "a#2" \(document 0, position 2\) does not follow the last one.*position 1 next/);
      writer.addDocument({ id: 'b', title: '' });
      expect(() =>
        writer.addChunk({ id: 'a#1', docNum: a, position: 1, contents: 'x', bodyStart: 0, nTokens: 1 }),
      ).toThrow(/does not follow the last one/);
    } finally {
      writer.close();
    }
  });
});

import { mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDensePhase } from '../../src/build/dense-phase.js';
import type { Encoder } from '../../src/encoder/encoder.js';
import { INDEX_FILES } from '../../src/index/layout.js';
import { ChunkStore } from '../../src/store/chunk-store.js';
import { createLogger } from '../../src/util/log.js';
import { build, writeJsonl } from '../helpers/build.js';
import { makeAlteredTinyModel, openTinyEncoder } from '../helpers/encoder.js';
import { HAS_SHARED, makeTempDir } from '../helpers/paths.js';

/**
 * Rebuilds embed only what changed: the vectors of chunks whose embedded text
 * the replaced index holds are taken from it (build/vector-reuse.ts). The
 * encoder is wrapped (our own interface) to count the texts it is given.
 */
const tmp = makeTempDir();
const indexDir = join(tmp.dir, 'idx');
const folder = join(tmp.dir, 'notes');
const TOPICS = ['rivers', 'glaciers', 'volcanoes', 'deserts', 'forests', 'oceans', 'caves', 'islands'];

function writeFolder(n: number): void {
  mkdirSync(join(folder, 'a'), { recursive: true });
  mkdirSync(join(folder, 'b'), { recursive: true });
  for (let i = 0; i < n; i++) {
    const topic = TOPICS[i % TOPICS.length] as string;
    writeFileSync(
      join(folder, i % 2 ? 'a' : 'b', `note-${i}.md`),
      `# Note ${i} on ${topic}\n\nThis note ${i} is about ${topic} and how ${topic} shape the land over ages.\n\n` +
        `## Details\n\nMore about ${topic} in note ${i}: measurements, places and names number ${i * 7}.\n`,
    );
  }
}

let base: Encoder;
let embedded: string[] = [];
const counting = (e: Encoder): Encoder => ({
  ...e,
  embedQueries: (t) => e.embedQueries(t),
  embedPassages: (t, signal, onProgress) => {
    embedded.push(...t);
    return e.embedPassages(t, signal, onProgress);
  },
  close: async () => {},
});

async function buildFolder(
  name: string,
  over: { enc?: Encoder; reuse?: boolean; input?: string; format?: 'files' | 'jsonl'; reuseDocuments?: boolean } = {},
): Promise<{ lines: string[]; seconds: number }> {
  embedded = [];
  const lines: string[] = [];
  const dense = createDensePhase({
    encoder: counting(over.enc ?? base),
    source: { kind: 'local', path: '/models/tiny' },
    vectorsDtype: 'f32',
    ann: { quantization: 'i8' },
    exactBelow: 20_000,
    annThreads: 1,
    ...(over.reuse === false ? { reuse: false } : {}),
  });
  const s = await build({
    name,
    input: over.input ?? folder,
    format: over.format ?? 'files',
    indexDir,
    chunkSize: 40,
    chunkOverlap: 0,
    dense,
    log: createLogger('info', (l) => lines.push(l)),
    ...(over.reuseDocuments === false ? { reuseDocuments: false } : {}),
  });
  return { lines, seconds: s.seconds };
}

/** Each chunk's embedded vector in the published index, by chunk id. */
function vectorsById(name: string): Map<string, Buffer> {
  const dir = join(indexDir, name);
  const store = new ChunkStore(join(dir, INDEX_FILES.store));
  const bytes = readFileSync(join(dir, INDEX_FILES.vectors));
  const out = new Map<string, Buffer>();
  try {
    const n = store.counts().chunks;
    const row = bytes.length / n;
    for (let i = 0; i < n; i++) out.set(store.getChunkId(i) as string, bytes.subarray(i * row, (i + 1) * row));
  } finally {
    store.close();
  }
  return out;
}

beforeAll(async () => {
  if (!HAS_SHARED) return;
  base = await openTinyEncoder();
  writeFolder(40);
});
afterAll(async () => {
  await base?.close();
  tmp.cleanup();
});

describe.skipIf(!HAS_SHARED)('a rebuild embeds only what changed', () => {
  it('after editing one file, adding one and removing one, only their chunks are embedded', async () => {
    await buildFolder('notes');
    const full = embedded.length;
    const before = vectorsById('notes');
    expect(full).toBe(before.size);

    writeFileSync(join(folder, 'a', 'note-1.md'), '# Note 1 rewritten\n\nEntirely new words about tides and moons.\n');
    writeFileSync(join(folder, 'b', 'extra.md'), '# Extra\n\nA new file about comets.\n');
    rmSync(join(folder, 'b', 'note-2.md'));
    const { lines } = await buildFolder('notes');
    const after = vectorsById('notes');

    // exactly the chunks whose text is new were embedded
    const fresh = [...after.keys()].filter((id) => id.startsWith('a/note-1.md#') || id.startsWith('b/extra.md#'));
    expect(embedded.length).toBe(fresh.length);
    expect(embedded.join(' ')).toMatch(/tides and moons/);
    expect(lines.join('\n')).toContain(
      `re-used the vectors of ${after.size - fresh.length} unchanged chunks and embedded ${fresh.length} new or changed ones`,
    );
    // the others kept their bytes, though most moved to other chunk numbers
    let same = 0;
    for (const [id, v] of after) {
      if (fresh.includes(id)) continue;
      expect(v.equals(before.get(id) as Buffer), id).toBe(true);
      same++;
    }
    expect(same).toBe(after.size - fresh.length);
    expect(after.has('b/note-2.md#0')).toBe(false);
  });

  it('a rebuild with another model file, or with --no-reuse-vectors, embeds every chunk', async () => {
    await buildFolder('switch');
    const all = embedded.length;
    const altered = await openTinyEncoder({ modelPath: makeAlteredTinyModel(join(tmp.dir, 'altered')) });
    try {
      const { lines } = await buildFolder('switch', { enc: altered });
      expect(embedded.length).toBe(all);
      expect(lines.join('\n')).toMatch(/vectors were made by another model file: every chunk is embedded/);
    } finally {
      await altered.close();
    }
    await buildFolder('switch', { reuse: false });
    expect(embedded.length).toBe(all);
  });

  it('holds for corpus files too: a JSON lines corpus with one record changed', async () => {
    const records = Array.from({ length: 30 }, (_, i) => ({
      id: `r${i}`,
      title: `Record ${i}`,
      text: `text of record ${i} about ${TOPICS[i % 8]}`,
    }));
    const input = writeJsonl(tmp.dir, 'corpus.jsonl', records);
    await buildFolder('records', { input, format: 'jsonl' });
    expect(embedded.length).toBe(30);
    records[7] = { id: 'r7', title: 'Record 7', text: 'a changed record about auroras' };
    writeJsonl(tmp.dir, 'corpus.jsonl', records);
    await buildFolder('records', { input, format: 'jsonl' });
    expect(embedded).toEqual([expect.stringContaining('auroras')]);
  });
});

describe.skipIf(!HAS_SHARED)('a folder rebuild reads only new and changed files (doc-reuse.ts)', () => {
  /** Every document and chunk row of an index's store, in order. */
  function rows(name: string): string {
    const store = new ChunkStore(join(indexDir, name, INDEX_FILES.store));
    try {
      const n = store.counts().chunks;
      return JSON.stringify(store.chunkRange(0, n));
    } finally {
      store.close();
    }
  }

  it('unchanged files come from the previous store, and the store is what a fresh build writes', async () => {
    await buildFolder('docs');
    writeFileSync(join(folder, 'a', 'note-3.md'), '# Note 3 again\n\nNew words about marshes and reeds.\n');
    writeFileSync(join(folder, 'b', 'added.md'), '# Added\n\nA file about lagoons.\n');
    rmSync(join(folder, 'b', 'note-4.md'));
    const { lines } = await buildFolder('docs');
    const text = lines.join('\n');
    // 40 files at first, one gone, one added: the two new or changed are read, the other 38 re-used
    expect(text).toMatch(/the previous index lends 40 documents/);
    expect(text).toMatch(/documents: 38 unchanged \(re-used\), 1 changed, 1 added, 1 removed/);
    await buildFolder('docs-fresh', { reuseDocuments: false });
    expect(rows('docs')).toBe(rows('docs-fresh'));
    expect(rows('docs')).toMatch(/marshes and reeds/);
    expect(rows('docs')).not.toMatch(/b\/note-4\.md/);
  });

  it('a file whose modification time moved is read again, though its size did not change', async () => {
    await buildFolder('stamps');
    const path = join(folder, 'b', 'note-8.md');
    const before = readFileSync(path, 'utf8');
    // same length, other words, and a later mtime
    writeFileSync(path, before.replace('rivers', 'rivera'));
    const later = new Date(Date.now() + 5000);
    utimesSync(path, later, later);
    const { lines } = await buildFolder('stamps');
    expect(lines.join('\n')).toMatch(/unchanged \(re-used\), 1 changed, 0 added, 0 removed/);
    expect(rows('stamps')).toMatch(/rivera/);
  });
});

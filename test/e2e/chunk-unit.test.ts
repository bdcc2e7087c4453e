import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeJsonl } from '../helpers/build.js';
import { TINY_MODEL } from '../helpers/encoder.js';
import { runBin } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir } from '../helpers/paths.js';
import { rawDatabase } from '../../src/store/sqlite.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

/** Every chunk's id and text, in order, read straight from the store. */
function chunks(indexDir: string, name: string): Array<{ id: string; contents: string }> {
  const db = rawDatabase(join(indexDir, name, 'chunks.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT id, contents FROM chunks ORDER BY num').all() as Array<{ id: string; contents: string }>;
  } finally {
    db.close();
  }
}

describe.skipIf(!HAS_SHARED)('chunks with and without the dense arm', () => {
  it('are the same with --chunk-unit words, and differ by rule (stated in the manifest) without it', () => {
    // long documents with words WordPiece splits into several tokens, so the two units cut differently
    const text = Array.from(
      { length: 60 },
      (_, i) => `Sentence ${i} mentions electroencephalography and ${i % 7} unbelievable things.`,
    ).join(' ');
    const input = writeJsonl(tmp.dir, 'docs.jsonl', [
      { id: 'd1', title: 'One', text },
      { id: 'd2', title: 'Two', text: text.split(' ').reverse().join(' ') },
    ]);
    const dir = join(tmp.dir, 'idx');
    const build = (name: string, args: string[]): void => {
      const r = runBin(BIN.build, [
        ...['--name', name, '--input', input, '--format', 'jsonl', '--index-dir', dir],
        ...['--chunk-size', '80', '--chunk-overlap', '10', '--no-progress', ...args],
      ]);
      expect(r.status, r.stderr).toBe(0);
    };
    build('bm25', ['--no-dense']);
    build('hybrid-words', ['--model-path', TINY_MODEL, '--chunk-unit', 'words']);
    build('hybrid', ['--model-path', TINY_MODEL]);
    expect(chunks(dir, 'hybrid-words')).toEqual(chunks(dir, 'bm25'));
    expect(chunks(dir, 'hybrid')).not.toEqual(chunks(dir, 'bm25'));
    const tokenizer = (name: string): string =>
      (JSON.parse(readFileSync(join(dir, name, 'manifest.json'), 'utf8')) as { chunker: { tokenizer: string } }).chunker
        .tokenizer;
    expect(tokenizer('bm25')).toBe('words');
    expect(tokenizer('hybrid-words')).toBe('words');
    expect(tokenizer('hybrid')).toMatch(/^wordpiece:/);
  });
});

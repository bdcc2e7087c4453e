/**
 * The dense arm embeds each format's convention: a BEIR corpus as `title text`
 * (the text BEIR and MTEB score e5 and bge with), recorded in the manifest;
 * `--dense-text contents` embeds the stored `"Title"\nbody` instead, and the
 * vectors differ while the stored text and BM25 do not.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/mcp.js';
import { tinyBuildArgs } from '../helpers/encoder.js';
import { BIN, HAS_SHARED, makeTempDir } from '../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

describe.skipIf(!HAS_SHARED)('the text the dense arm embeds, by format', () => {
  const input = join(tmp.dir, 'corpus.jsonl');
  writeFileSync(
    input,
    [
      { _id: 'd1', title: 'Canberra', text: 'Canberra is the capital city of Australia.' },
      { _id: 'd2', title: 'Pulp Fiction', text: 'A 1994 crime film directed by Quentin Tarantino.' },
      { _id: 'd3', title: '', text: 'An untitled document about photosynthesis.' },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  const build = (name: string, extra: string[] = []): { manifest: Record<string, unknown>; vectors: Buffer } => {
    const dir = join(tmp.dir, 'idx');
    const r = runBin(BIN.build, [...tinyBuildArgs(name, input, dir, 'beir'), '--no-progress', ...extra]);
    expect(r.status, r.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(dir, name, 'manifest.json'), 'utf8')) as Record<string, unknown>;
    return { manifest, vectors: readFileSync(join(dir, name, 'vectors.bin')) };
  };

  it('embeds BEIR as `title text` by default, records it, and --dense-text contents changes only the vectors', () => {
    const beir = build('beir-default');
    const contents = build('beir-contents', ['--dense-text', 'contents']);
    expect((beir.manifest['dense'] as { text: string }).text).toBe('title-body');
    expect((contents.manifest['dense'] as { text: string }).text).toBe('contents');
    expect(beir.vectors.length).toBe(contents.vectors.length);
    const rowBytes = beir.vectors.length / 3;
    // titled documents get other vectors; the untitled one is the same text either way
    expect(beir.vectors.subarray(0, rowBytes).equals(contents.vectors.subarray(0, rowBytes))).toBe(false);
    expect(beir.vectors.subarray(2 * rowBytes).equals(contents.vectors.subarray(2 * rowBytes))).toBe(true);
  });

  it('names the choices when --dense-text is wrong', () => {
    const r = runBin(BIN.build, [
      ...tinyBuildArgs('bad', input, join(tmp.dir, 'idx'), 'beir'),
      '--dense-text',
      'title',
    ]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/dense-text.*contents.*title-body/s);
  });
});

import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonValues } from '../../../src/ingest/json-values.js';
import { readLines } from '../../../src/ingest/lines.js';
import { readCorpus, readCorpusBatches } from '../../../src/ingest/readers.js';
import { splitTitleLine } from '../../../src/ingest/title-line.js';
import type { SourceDocument } from '../../../src/ingest/types.js';
import type { CorpusFormat } from '../../../src/core/contracts.js';
import { HAS_SHARED, makeTempDir, sharedPath } from '../../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

async function collect(format: CorpusFormat, path: string): Promise<SourceDocument[]> {
  const out: SourceDocument[] = [];
  for await (const d of readCorpus(format, path)) out.push(d);
  return out;
}

function file(name: string, content: string | Buffer): string {
  const p = join(tmp.dir, name);
  writeFileSync(p, content);
  return p;
}

describe('line reader', () => {
  it('streams lines across block boundaries, CRLF and a missing final newline', async () => {
    const long = 'x'.repeat(3 << 20); // longer than one 1 MiB read block
    const p = file('lines.txt', `a\r\n${long}\nb\n\nc`);
    const lines: string[] = [];
    for await (const { line } of readLines(p)) lines.push(line);
    expect(lines).toEqual(['a', long, 'b', '', 'c']);
  });

  it('gives the lines, hash and progress of the whole file through one reused buffer, as the gzip path does', async () => {
    // 3.5 MB of lines of every length (a few longer than the buffer), multibyte characters
    // that reads cut in two, CR LF pairs cut between reads, empty lines; no final newline
    let seed = 17;
    const rand = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
    const parts: string[] = [];
    let size = 0;
    while (size < 3_500_000) {
      const len = rand(10) === 0 ? rand(1_500_000) : rand(300);
      const line = Array.from({ length: Math.min(len, 50) }, () => ['a', 'é', '東', '😀', ' '][rand(5)]).join('');
      const text = line.repeat(Math.max(1, Math.floor(len / Math.max(1, line.length))));
      parts.push(text);
      size += Buffer.byteLength(text) + 2;
    }
    const content = parts.map((l, i) => (i % 3 === 0 ? `${l}\r\n` : `${l}\n`)).join('') + 'last';
    const want = content.split('\n').map((l) => l.replace(/\r$/, ''));
    const plain = file('mixed.txt', content);
    const gz = file('mixed.txt.gz', gzipSync(content));
    for (const p of [plain, gz]) {
      const hash = createHash('sha256');
      let progress = 0;
      const lines: string[] = [];
      const numbers: number[] = [];
      for await (const { line, lineNo } of readLines(p, { hash, onProgress: (e) => (progress = e.bytesRead) })) {
        lines.push(line);
        numbers.push(lineNo);
      }
      expect(lines.length).toBe(want.length);
      expect(lines).toEqual(want);
      expect(numbers).toEqual(want.map((_, i) => i + 1));
      const bytes = readFileSync(p);
      expect(hash.digest('hex')).toBe(createHash('sha256').update(bytes).digest('hex'));
      expect(progress).toBe(bytes.length);
    }
  });

  it('reads gzip files transparently', async () => {
    const p = file('lines.txt.gz', gzipSync('one\ntwo\n'));
    const lines: string[] = [];
    for await (const { line } of readLines(p)) lines.push(line);
    expect(lines).toEqual(['one', 'two']);
  });
});

describe('streaming JSON values', () => {
  it('yields array elements one by one, with strings holding brackets and escapes', async () => {
    const values = [{ a: '[{"x"}]' }, { b: 'quote \\" here', c: [1, { d: 2 }] }, { e: 'é😀' }];
    const p = file('arr.json', JSON.stringify(values, null, 2));
    const got: unknown[] = [];
    for await (const { value } of readJsonValues(p)) got.push(value);
    expect(got).toEqual(values);
  });

  it('accepts a single top-level object', async () => {
    const p = file('one.json', '{"corpus_name": "Medical", "context": "text"}');
    const got: unknown[] = [];
    for await (const { value } of readJsonValues(p)) got.push(value);
    expect(got).toEqual([{ corpus_name: 'Medical', context: 'text' }]);
  });

  it('reports a truncated file instead of silently dropping the tail', async () => {
    const p = file('trunc.json', '[{"a": 1}, {"b": "unterminated');
    await expect(async () => {
      for await (const _ of readJsonValues(p)) void _;
    }).rejects.toThrow(/truncated/);
  });

  it('handles multi-byte characters split across read blocks', async () => {
    const big = 'é'.repeat(700_000); // 1.4 MB of 2-byte characters
    const p = file('mb.json', JSON.stringify([{ t: big }, { t: 'ok' }]));
    const got: Array<{ t: string }> = [];
    for await (const { value } of readJsonValues(p)) got.push(value as { t: string });
    expect(got.map((g) => g.t.length)).toEqual([700_000, 2]);
    expect(got[0]?.t).toBe(big);
  });
});

describe('corpus readers', () => {
  it('wiki18: splits the quoted title line and keeps contents verbatim', async () => {
    const p = file(
      'w.jsonl',
      JSON.stringify({ id: '7', contents: '"Evan Morris"\nEvan L. Morris was a lobbyist.' }) + '\n',
    );
    const [doc] = await collect('wiki18', p);
    expect(doc).toEqual({
      id: '7',
      title: 'Evan Morris',
      text: 'Evan L. Morris was a lobbyist.',
      verbatim: { contents: '"Evan Morris"\nEvan L. Morris was a lobbyist.', bodyStart: 14 },
    });
  });

  it('wiki18: names the line and the expected schema on bad records', async () => {
    const p = file('bad.jsonl', '{"id":"1","contents":"\\"A\\"\\nx"}\n{"id":"2","text":"no contents"}\n');
    await expect(collect('wiki18', p)).rejects.toThrow(/line 2: missing string field "contents"/);
    const q = file('badjson.jsonl', '{"id":"1","contents":"x"}\n{oops\n');
    await expect(collect('wiki18', q)).rejects.toThrow(/line 2: not valid JSON/);
  });

  it('wiki18: batches span read blocks, keep every record in order, and count lines across blocks', async () => {
    // ~3.4 MB over 1 MiB read blocks: records and line numbers must carry across block edges
    const rec = (i: number): string => JSON.stringify({ id: String(i), contents: `"T${i}"\n${'w'.repeat(i % 700)}` });
    const n = 9000;
    const good = Array.from({ length: n }, (_, i) => rec(i)).join('\n');
    const p = file('many.jsonl', `${good}\n`);
    const batches: SourceDocument[][] = [];
    for await (const b of readCorpusBatches('wiki18', p)) batches.push(b);
    expect(batches.length).toBeGreaterThan(2);
    expect(batches.flat().map((d) => d.id)).toEqual(Array.from({ length: n }, (_, i) => String(i)));
    expect((await collect('wiki18', p)).map((d) => d.title)).toEqual(Array.from({ length: n }, (_, i) => `T${i}`));
    // a bad record on line 8,001, in the last block
    const q = file(
      'many-bad.jsonl',
      `${Array.from({ length: 8000 }, (_, i) => rec(i)).join('\n')}\n{oops\n${rec(1)}\n`,
    );
    await expect(collect('wiki18', q)).rejects.toThrow(/line 8001: not valid JSON/);
  });

  it('jsonl: id/title/text/metadata, with record indexes for missing ids', async () => {
    const p = file(
      'g.jsonl',
      [
        JSON.stringify({ id: 'a', title: 'T', text: 'hello', metadata: { source: 'x' } }),
        JSON.stringify({ contents: '"Flash"\nrag body' }),
      ].join('\n'),
    );
    const docs = await collect('jsonl', p);
    expect(docs[0]).toEqual({ id: 'a', title: 'T', text: 'hello', metadata: { source: 'x' } });
    expect(docs[1]).toMatchObject({ id: '1', title: 'Flash', text: 'rag body' });
  });

  it('beir: {_id, title, text}', async () => {
    const p = file(
      'corpus.jsonl',
      JSON.stringify({ _id: 'MED-1', title: 'Title', text: 'Text.', metadata: {} }) + '\n',
    );
    expect(await collect('beir', p)).toEqual([{ id: 'MED-1', title: 'Title', text: 'Text.' }]);
  });

  it('multihop: keeps the article metadata on the document', async () => {
    const p = file(
      'corpus.json',
      JSON.stringify([
        {
          title: 'A',
          author: 'Au',
          source: 'TechCrunch',
          published_at: '2023-10-01T00:00:00+00:00',
          category: 'tech',
          url: 'u',
          body: 'Body.',
        },
      ]),
    );
    expect(await collect('multihop', p)).toEqual([
      {
        id: '0',
        title: 'A',
        text: 'Body.',
        metadata: {
          author: 'Au',
          source: 'TechCrunch',
          published_at: '2023-10-01T00:00:00+00:00',
          category: 'tech',
          url: 'u',
        },
      },
    ]);
  });

  it('graphrag: a list or a single {corpus_name, context}', async () => {
    const p = file('novel.json', JSON.stringify([{ corpus_name: 'Novel-1', context: 'Once.' }]));
    expect(await collect('graphrag', p)).toEqual([{ id: 'Novel-1', title: 'Novel-1', text: 'Once.' }]);
    const bad = file('bad.json', JSON.stringify([{ name: 'x' }]));
    await expect(collect('graphrag', bad)).rejects.toThrow(/GraphRAG-Bench corpus schema/);
  });

  it('graphrag: batches hold at most 256 elements and about 1M characters, in order', async () => {
    const sizes = async (path: string): Promise<number[][]> => {
      const out: number[][] = [];
      for await (const b of readCorpusBatches('graphrag', path)) out.push(b.map((d) => d.text.length));
      return out;
    };
    const many = Array.from({ length: 600 }, (_, i) => ({ corpus_name: `C${i}`, context: 'x'.repeat(1 + (i % 7)) }));
    const small = await sizes(file('many.json', JSON.stringify(many)));
    expect(small.map((b) => b.length)).toEqual([256, 256, 88]);
    expect(small.flat()).toEqual(many.map((m) => m.context.length));
    // books: the batch ends once it holds 1M characters, not after 256 of them
    const books = Array.from({ length: 3 }, (_, i) => ({ corpus_name: `B${i}`, context: 'y'.repeat(600_000) }));
    expect(await sizes(file('books.json', JSON.stringify(books)))).toEqual([[600_000, 600_000], [600_000]]);
  });

  it('splitTitleLine handles missing newlines and unquoted titles', () => {
    expect(splitTitleLine('no title')).toEqual({ title: '', bodyStart: 0 });
    expect(splitTitleLine('Plain\nbody')).toEqual({ title: 'Plain', bodyStart: 6 });
  });

  it('names a missing input file', async () => {
    await expect(collect('wiki18', join(tmp.dir, 'nope.jsonl'))).rejects.toThrow(/cannot read input .*nope.jsonl/);
  });
});

describe.skipIf(!HAS_SHARED)('readers on the shared real files', () => {
  it('reads the Search-R1 wiki-18 sample', async () => {
    const docs = await collect('wiki18', sharedPath('data/wiki18-sample/corpus.jsonl'));
    expect(docs).toHaveLength(10);
    for (const d of docs) {
      expect(d.title.length).toBeGreaterThan(0);
      expect(d.verbatim?.contents.startsWith(`"${d.title}"\n`)).toBe(true);
    }
  });

  it('reads GraphRAG-Bench medical (one object) and novel (a list of 20 books)', async () => {
    const medical = await collect('graphrag', sharedPath('data/graphrag-bench/medical.json'));
    expect(medical.map((d) => d.id)).toEqual(['Medical']);
    expect(medical[0]?.text.length).toBeGreaterThan(1_000_000);
    const novels = await collect('graphrag', sharedPath('data/graphrag-bench/novel.json'));
    expect(novels).toHaveLength(20);
  });

  it('reads the MultiHop-RAG corpus schema', async () => {
    const docs = await collect('multihop', sharedPath('data/multihop-rag/corpus.surrogate.json'));
    expect(docs).toHaveLength(609);
    expect(docs[0]?.title).toBe('The FTX trial is bigger than Sam Bankman-Fried');
  });
});

describe('JSON lines that are something else', () => {
  it('reads past a UTF-8 byte order mark on the first line', async () => {
    const p = file(
      'bom.jsonl',
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"id":"a","text":"x"}\n')]),
    );
    expect((await collect('jsonl', p)).map((d) => d.id)).toEqual(['a']);
  });

  it('names a JSON array or a pretty-printed document and the way out', async () => {
    const arr = file('arr.jsonl', '[{"id":"a","text":"x"}]\n');
    await expect(collect('jsonl', arr)).rejects.toThrow(
      /one JSON array, not JSON lines.*--format multihop.*jq -c '\.\[\]'/,
    );
    const pretty = file('pretty.jsonl', '[\n  {"id":"a","text":"x"}\n]\n');
    await expect(collect('jsonl', pretty)).rejects.toThrow(/one JSON array spread over several lines/);
    const bad = file('bad.jsonl', '{"id":"a","text":"x"}\n{"id": oops}\n');
    await expect(collect('jsonl', bad)).rejects.toThrow(/line 2: not valid JSON/);
  });

  it('reports each record that had no id', async () => {
    const p = file('noid.jsonl', '{"text":"x"}\n{"id":"b","text":"y"}\n{"text":"z"}\n');
    const missing: string[] = [];
    const ids: string[] = [];
    for await (const batch of readCorpusBatches('jsonl', p, { onMissingId: (w) => missing.push(w) }))
      ids.push(...batch.map((d) => d.id));
    expect(ids).toEqual(['0', 'b', '2']);
    expect(missing).toEqual([`${p} line 1`, `${p} line 3`]);
  });
});

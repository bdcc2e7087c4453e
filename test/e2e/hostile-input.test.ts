import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { bm25BuildArgs, writeJsonl } from '../helpers/build.js';
import { TINY_MODEL, tinyBuildArgs } from '../helpers/encoder.js';
import { connectStdio, runBinAsync, type ToolText } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir } from '../helpers/paths.js';

// Reliability III, items 12, 13, 24 and 25: build input and model directories an outside probe sent.
const tmp = makeTempDir();
afterAll(tmp.cleanup);
let n = 0;
const dir = (): string => join(tmp.dir, `idx${n++}`);

const build = (args: string[]) => runBinAsync(BIN.build, [...args, '--no-progress']);

describe('hostile corpus files', () => {
  it('a .gz of one 24 MB line builds in linear time (before: quadratic, minutes)', async () => {
    const text = 'lorem ipsum dolor '.repeat((24 * 2 ** 20) / 18);
    const path = join(tmp.dir, 'long-line.jsonl.gz');
    writeFileSync(
      path,
      gzipSync(
        `${JSON.stringify({ id: 'long', contents: `"Long"\n${text}` })}\n{"id":"b","contents":"\\"B\\"\\nshort"}\n`,
      ),
    );
    const t0 = Date.now();
    const r = await build(bm25BuildArgs('c', path, dir(), 'wiki18'));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/built c: 2 documents, 2 chunks/);
    // the same file uncompressed builds in seconds; 1,500 re-copies of the growing line took minutes
    expect(Date.now() - t0).toBeLessThan(90_000);
  }, 120_000);

  it('lone surrogates in an id and title: replaced once, the id fetches back, the text starts at the body', async () => {
    const path = join(tmp.dir, 'surrogates.jsonl');
    // written as the escapes scraped data carries (JSON.stringify would escape them the same way)
    writeFileSync(
      path,
      '{"id":"doc\\ud800x","title":"T\\udc00itle","text":"river bank erosion"}\n{"id":"plain","title":"P","text":"lake"}\n',
    );
    const indexDir = dir();
    const r = await build(bm25BuildArgs('c', path, indexDir, 'jsonl'));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/1 records held lone surrogates .* replaced by U\+FFFD/);
    const s = await connectStdio(['--corpus', 'c', '--index-dir', indexDir]);
    try {
      const hit = (await s.client.callTool({
        name: 'search',
        arguments: { query: 'river erosion', top_k: 1 },
      })) as ToolText;
      const first = (hit.structuredContent as { results: Array<{ id: string; title: string; text: string }> })
        .results[0];
      expect(first?.id).toBe('doc\ufffdx#0');
      expect(first?.title).toBe('T\ufffditle');
      expect(first?.text).toBe('river bank erosion');
      const fetched = (await s.client.callTool({ name: 'fetch', arguments: { ids: [first?.id] } })) as ToolText;
      const got = fetched.structuredContent as { chunks: Array<{ id: string }>; missing: string[] };
      expect(got.missing).toEqual([]);
      expect(got.chunks[0]?.id).toBe(first?.id);
    } finally {
      await s.close();
    }
  });

  it('documents with no text are counted, not dropped in silence', async () => {
    const path = writeJsonl(tmp.dir, 'empty.jsonl', [
      { id: 'a', title: '', text: '   ' },
      { id: 'b', title: '', text: '' },
      { id: 'c', title: 'C', text: 'something' },
    ]);
    const r = await build(bm25BuildArgs('c', path, dir(), 'jsonl'));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/2 documents had no text and got no chunk \(the first: id "a"\)/);
  });

  it('metadata nested 5,000 deep: one line naming the record, not a stack overflow', async () => {
    let meta = '1';
    for (let i = 0; i < 5000; i++) meta = `{"a":${meta}}`;
    const path = join(tmp.dir, 'deep.jsonl');
    writeFileSync(path, `{"id":"ok","text":"fine"}\n{"id":"x","text":"hello","metadata":${meta}}\n`);
    const r = await build(bm25BuildArgs('c', path, dir(), 'jsonl'));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/deep\.jsonl line 2: .*(nested \d+ levels deep|nested too deeply)/);
    expect(r.stderr).not.toMatch(/Maximum call stack size exceeded$/m);
  });
});

describe.skipIf(!HAS_SHARED)('model directories that are not what they claim', () => {
  const input = (): string => writeJsonl(tmp.dir, `m${n++}.jsonl`, [{ id: '1', contents: '"A"\nalpha beta' }]);
  /** A copy of the tiny model with `edit` applied. */
  function model(edit: (d: string) => void): string {
    const d = join(tmp.dir, `model${n++}`);
    cpSync(TINY_MODEL, d, { recursive: true });
    edit(d);
    return d;
  }
  const buildWith = (modelDir: string, indexDir = dir()) =>
    build([...tinyBuildArgs('c', input(), indexDir).slice(0, -2), '--model-path', modelDir]);

  it.each([
    [
      'a tokenizer.json of null',
      (d: string) => writeFileSync(join(d, 'tokenizer.json'), 'null'),
      /tokenizer\.json is not a tokenizer/,
    ],
    [
      'a tokenizer.json that is /dev/zero',
      (d: string) => {
        rmSync(join(d, 'tokenizer.json'));
        symlinkSync('/dev/zero', join(d, 'tokenizer.json'));
      },
      /tokenizer\.json is a character device, not a regular file/,
    ],
    [
      'onnx/model.onnx a directory',
      (d: string) => {
        rmSync(join(d, 'onnx', 'model.onnx'));
        mkdirSync(join(d, 'onnx', 'model.onnx'));
      },
      /onnx\/model\.onnx is a directory/,
    ],
    [
      'max_seq_length 0',
      (d: string) => {
        writeFileSync(join(d, 'modules.json'), '[]');
        writeFileSync(join(d, 'sentence_bert_config.json'), '{"max_seq_length": 0}');
      },
      /sentence_bert_config\.json: "max_seq_length" must be an integer from 1/,
    ],
    [
      'a negative hidden_size',
      (d: string) => writeFileSync(join(d, 'config.json'), '{"hidden_size": -32}'),
      /"hidden_size" must be an integer from 1/,
    ],
    // issue 47, item 9: 1e9 failed every query holding the token inside ONNX Runtime, -7 wrapped
    // round into wrong vectors, 3.5 and "x" failed as BigInts with no file named
    ...([1e9, -7, 3.5, 'x'] as const).map((id): [string, (d: string) => void, RegExp] => [
      `a vocabulary id of ${JSON.stringify(id)}`,
      (d) => setVocabId(d, 'alpha', id),
      new RegExp(
        `tokenizer\\.json: token "alpha" has id ${typeof id === 'string' ? '"x"' : String(id).replace('.', '\\.')}, ` +
          'but ids must be integers from 0 to 30521 \\(config\\.json: vocab_size 30522\\)',
      ),
    ]),
  ])('%s: one MODEL error naming the file, exit 1', async (_label, edit, message) => {
    const r = await buildWith(model(edit));
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(message);
    expect(r.stderr).not.toMatch(/TypeError|EISDIR|Aborted|heap out of memory/);
  });

  it('a server refuses a tokenizer whose ids the model cannot hold, before its first query', async () => {
    const indexDir = dir();
    expect((await buildWith(TINY_MODEL, indexDir)).status).toBe(0);
    const r = await runBinAsync(BIN.server, [
      ...['--corpus', 'c', '--index-dir', indexDir],
      ...['--model-path', model((d) => setVocabId(d, 'alpha', 1e9))],
    ]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/token "alpha" has id 1000000000/);
  });

  it('an index refuses the same ONNX file with another tokenizer.json (ids swapped)', async () => {
    const indexDir = dir();
    expect((await buildWith(TINY_MODEL, indexDir)).status).toBe(0);
    const swapped = model((d) => {
      const tok = JSON.parse(readFileSync(join(d, 'tokenizer.json'), 'utf8'));
      const v = tok.model.vocab as Record<string, number>;
      [v['alpha'], v['beta']] = [v['beta'] as number, v['alpha'] as number];
      writeFileSync(join(d, 'tokenizer.json'), JSON.stringify(tok));
    });
    const r = await runBinAsync(BIN.server, ['--corpus', 'c', '--index-dir', indexDir, '--model-path', swapped]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/tokenizer\.json sha256 .* vs /);
  });
});

/** Sets one token's id in a model directory's tokenizer.json. */
function setVocabId(modelDir: string, token: string, id: unknown): void {
  const path = join(modelDir, 'tokenizer.json');
  const tok = JSON.parse(readFileSync(path, 'utf8'));
  (tok.model.vocab as Record<string, unknown>)[token] = id;
  writeFileSync(path, JSON.stringify(tok));
}

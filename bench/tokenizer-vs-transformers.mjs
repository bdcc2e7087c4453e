// Our WordPiece tokenizer against @huggingface/transformers' (the design card's
// @xenova/transformers successor) on the same tokenizer.json: identical ids, and
// speed on real passages. transformers.js is NOT a dependency of the product;
// install it anywhere and point to it:
//   (cd /tmp/hft && ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm i @huggingface/transformers@3.8.0)
//   HF_TRANSFORMERS=/tmp/hft/node_modules/@huggingface/transformers/dist/transformers.node.mjs \
//     node bench/tokenizer-vs-transformers.mjs
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const shared = process.env.RETRIEVER_MCP_SHARED ?? join(root, '..', 'shared');
const modelDir = join(shared, 'models', 'tiny-e5');
const { WordPieceTokenizer } = await import(join(root, 'dist/src/encoder/wordpiece.js'));
const hf = await import(process.env.HF_TRANSFORMERS ?? '@huggingface/transformers');
hf.env.allowRemoteModels = false;
hf.env.localModelPath = dirname(modelDir);
const theirs = await hf.AutoTokenizer.from_pretrained('tiny-e5');
const ours = WordPieceTokenizer.fromFile(join(modelDir, 'tokenizer.json'));

const texts = readFileSync(join(shared, 'data/2wiki-200/corpus.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => 'passage: ' + JSON.parse(l).contents);
const long = JSON.parse(readFileSync(join(shared, 'data/graphrag-bench/novel.json'), 'utf8'))
  .map((d) => d.context)
  .join(' ');
for (let i = 0; i < 400; i++) texts.push('passage: ' + long.slice(i * 3000, i * 3000 + 3000));

// Hugging Face tokenizers (the Python reference, see golden.json) keep [SEP]
// last when truncating; count the texts where only that differs separately
let mismatches = 0;
let truncatedWithoutSep = 0;
for (const t of texts) {
  const a = ours.encode(t, 512).ids;
  const b = Array.from(theirs(t, { truncation: true, max_length: 512 }).input_ids.data, Number);
  if (a.length !== b.length || a.some((x, i) => x !== b[i])) {
    const onlyLast = a.length === b.length && a.every((x, i) => x === b[i] || i === a.length - 1);
    if (onlyLast && a[a.length - 1] === 102) truncatedWithoutSep++;
    else mismatches++;
  }
}
const time = (fn) => {
  for (let r = 0; r < 2; r++) for (const t of texts) fn(t); // warm
  const t0 = performance.now();
  for (let r = 0; r < 3; r++) for (const t of texts) fn(t);
  return (3 * texts.length) / ((performance.now() - t0) / 1000);
};
const oursRate = time((t) => ours.encode(t, 512));
const theirsRate = time((t) => theirs(t, { truncation: true, max_length: 512 }));
const out = {
  texts: texts.length,
  mismatches,
  truncatedWithoutSep,
  oursPerSec: Math.round(oursRate),
  transformersPerSec: Math.round(theirsRate),
  speedup: +(oursRate / theirsRate).toFixed(2),
};
process.stdout.write(`${JSON.stringify(out)}\n`);

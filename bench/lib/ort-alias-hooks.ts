import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The resolve hook of ort-alias.ts: `onnxruntime-node` from RETRIEVER_BENCH_ORT's folder. */
export async function resolve(
  specifier: string,
  context: unknown,
  next: (specifier: string, context: unknown) => Promise<{ url: string }>,
): Promise<{ url: string; shortCircuit?: boolean }> {
  const dir = process.env['RETRIEVER_BENCH_ORT'];
  if (dir && specifier === 'onnxruntime-node') {
    return { url: pathToFileURL(join(dir, 'node_modules/onnxruntime-node/dist/index.js')).href, shortCircuit: true };
  }
  return next(specifier, context);
}

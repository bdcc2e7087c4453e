import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { DEFAULTS } from '../config.js';
import { RetrieverError } from '../errors.js';
import { SEARCH_MODES, type SearchMode } from '../search/types.js';
import { createLogger, type LogLevel } from '../util/log.js';
import { failUsage, runMain } from './boundary.js';
import { checkInt, ENCODER_RUNTIME_OPTIONS, hubConfig } from './shared-options.js';

const PROG = 'retriever-mcp';

export async function main(argv: string[]): Promise<void> {
  const args = await yargs(argv)
    .scriptName(PROG)
    .usage('$0 --corpus NAME [--corpus NAME2 ...] [options]\n\nServe corpora to MCP clients (stdio by default).')
    .option('corpus', { type: 'string', array: true, demandOption: true, describe: 'corpus to serve (repeatable)' })
    .option('index-dir', { type: 'string', default: DEFAULTS.indexDir, describe: 'where indexes live' })
    .option('top-k', { type: 'number', default: DEFAULTS.topK, describe: 'hits returned when a client does not say' })
    .option('max-top-k', { type: 'number', default: DEFAULTS.maxTopK, describe: 'largest top_k a client may ask for' })
    .option('mode', {
      choices: SEARCH_MODES,
      describe: 'default search mode (default: hybrid when the index has a dense arm, else bm25)',
    })
    .option('candidates', { type: 'number', default: 100, describe: 'hits each arm retrieves before fusion' })
    .option('rrf-k', { type: 'number', default: 60, describe: 'Reciprocal Rank Fusion k' })
    .option('model', { type: 'string', describe: "query encoder (hub id); default: each index's own encoder" })
    .option('model-path', { type: 'string', describe: 'query encoder from a local Hugging Face ONNX directory' })
    .option('model-variant', { type: 'string', describe: 'ONNX file variant (fp32, fp16, int8 or a path)' })
    .options(ENCODER_RUNTIME_OPTIONS)
    .option('ef-search', {
      type: 'number',
      describe: 'HNSW efSearch for every corpus (default: the value stored in each index)',
    })
    .option('mmap', {
      type: 'boolean',
      default: true,
      describe: 'memory-map ANN files (shared page cache); --no-mmap reads them into RAM',
    })
    .option('log-level', { choices: ['debug', 'info', 'warn', 'error', 'silent'] as const, default: 'info' as const })
    .strict()
    .fail(failUsage(PROG))
    .help()
    .version(false)
    .parseAsync();

  const log = createLogger(args['log-level'] as LogLevel);
  checkInt('--top-k', args['top-k'], 1, args['max-top-k']);
  checkInt('--max-top-k', args['max-top-k'], 1, 10_000);
  checkInt('--candidates', args.candidates, 1, 100_000);
  checkInt('--batch-size', args['batch-size'], 1, 4096);
  checkInt('--encoder-threads', args['encoder-threads'], 0, 256);
  if (args['ef-search'] !== undefined) checkInt('--ef-search', args['ef-search'], 1, 100_000);
  if (!(args['rrf-k'] > 0)) throw new RetrieverError('BAD_INPUT', `--rrf-k must be positive, got ${args['rrf-k']}`);
  const { loadRetriever } = await import('../server/load.js');
  const { openDenseArm } = await import('../index/dense/dense-arm.js');
  const { loadCorpusEncoders } = await import('../server/encoders.js');
  const hub = hubConfig(args, log, true);
  const encoderFlags = {
    device: args.device,
    threads: args['encoder-threads'],
    batchSize: args['batch-size'],
    ...(args.model !== undefined ? { model: args.model } : {}),
    ...(args['model-path'] !== undefined ? { modelPath: args['model-path'] } : {}),
    ...(args['model-variant'] !== undefined ? { variant: args['model-variant'] } : {}),
  };
  const retriever = await loadRetriever({
    indexDir: args['index-dir'],
    corpora: args.corpus,
    log,
    openDense: (dir, manifest, hint) =>
      openDenseArm(dir, manifest.dense as NonNullable<typeof manifest.dense>, hint, {
        mmap: args.mmap,
        rescoreFactor: 4,
        ...(args['ef-search'] !== undefined ? { expansionSearch: args['ef-search'] } : {}),
      }),
    loadEncoders: async (corpora) => (await loadCorpusEncoders(corpora, encoderFlags, hub, log)).encoders,
    retriever: {
      topK: args['top-k'],
      maxTopK: args['max-top-k'],
      maxQueryChars: DEFAULTS.maxQueryChars,
      candidates: args.candidates,
      rrfK: args['rrf-k'],
      weights: { bm25: 1, dense: 1 },
      mode: args.mode as SearchMode | undefined,
    },
  });
  const { serveStdio } = await import('../server/stdio.js');
  await serveStdio(retriever, DEFAULTS.maxBatchQueries, log);
}

export function run(): Promise<void> {
  return runMain(PROG, () => main(hideBin(process.argv)));
}

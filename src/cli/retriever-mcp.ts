import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { DEFAULTS } from '../config.js';
import { SEARCH_MODES, type SearchMode } from '../search/types.js';
import { createLogger, type LogLevel } from '../util/log.js';
import { failUsage, runMain } from './boundary.js';

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
    .option('log-level', { choices: ['debug', 'info', 'warn', 'error', 'silent'] as const, default: 'info' as const })
    .strict()
    .fail(failUsage(PROG))
    .help()
    .version(false)
    .parseAsync();

  const log = createLogger(args['log-level'] as LogLevel);
  const { loadRetriever } = await import('../server/load.js');
  const retriever = await loadRetriever({
    indexDir: args['index-dir'],
    corpora: args.corpus,
    log,
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

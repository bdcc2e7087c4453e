import { writeFileSync } from 'node:fs';
import yargs from 'yargs';
import { DEFAULTS } from '../config.js';
import { RetrieverError } from '../errors.js';
import { EVAL_FORMATS, type EvalFormat } from '../eval/queries.js';
import { SEARCH_MODES, type SearchMode } from '../search/types.js';
import type { ServeConfig } from '../server/serve.js';
import { createLogger } from '../util/log.js';
import { failUsage } from './boundary.js';
import { checkInt, ENCODER_RUNTIME_OPTIONS, hubConfig } from './shared-options.js';

const PROG = 'retriever-mcp eval';

/**
 * retriever-mcp eval: runs a benchmark's queries through the server's own
 * search path and reports recall@k, MRR@10 and nDCG@10 (per question type).
 */
export async function evalMain(argv: string[]): Promise<void> {
  const args = await yargs(argv)
    .scriptName(PROG)
    .usage('$0 --corpus NAME [--queries FILE --format FORMAT] [options]\n\nScore retrieval against a benchmark.')
    .option('corpus', { type: 'string', demandOption: true, describe: 'the built corpus to evaluate' })
    .option('queries', { type: 'string', describe: "query file (default for presets: the preset's questions)" })
    .option('format', { choices: EVAL_FORMATS, describe: "query file format (default for presets: the preset's)" })
    .option('qrels', { type: 'string', describe: 'BEIR qrels TSV (default: qrels/test.tsv beside the queries)' })
    .option('mode', {
      type: 'string',
      describe: 'comma-separated modes to compare (default: every mode the index has)',
    })
    .option('k', { type: 'string', default: '1,3,5,10', describe: 'cut-offs for recall@k' })
    .option('limit', { type: 'number', describe: 'evaluate only the first N queries' })
    .option('evidence-threshold', {
      type: 'number',
      default: 0.7,
      describe: 'GraphRAG-Bench: share of evidence terms a chunk must contain to count as a hit',
    })
    .option('json', { type: 'string', describe: 'also write the results as JSON to this path' })
    .option('index-dir', { type: 'string', default: DEFAULTS.indexDir })
    .option('model-path', { type: 'string', describe: "query encoder from a local directory (default: the index's)" })
    .options(ENCODER_RUNTIME_OPTIONS)
    .option('progress', { type: 'boolean', default: true })
    .strict()
    .fail(failUsage(PROG))
    .help()
    .version(false)
    .parseAsync();

  const ks = args.k.split(',').map(Number);
  for (const k of ks) checkInt('--k', k, 1, 100);
  if (args.limit !== undefined) checkInt('--limit', args.limit, 1, 10_000_000);
  const log = createLogger('info');
  const hub = hubConfig(args, log, args.progress);
  const { getPreset } = await import('../presets/presets.js');
  const preset = getPreset(args.corpus);
  let queriesPath = args.queries;
  let format = args.format as EvalFormat | undefined;
  if (!queriesPath && preset?.queries) {
    const { fetchPresetFile } = await import('../presets/presets.js');
    queriesPath = await fetchPresetFile(preset, 'queries', hub);
    format ??= preset.queries.format as EvalFormat;
  }
  if (!queriesPath || !format) {
    throw new RetrieverError(
      'BAD_INPUT',
      'eval needs --queries FILE and --format (flashrag, beir, multihop or graphrag)',
    );
  }

  const { openRetriever } = await import('../server/serve.js');
  const { createServerMetrics } = await import('../server/metrics.js');
  const cfg = {
    corpora: [args.corpus],
    indexDir: args['index-dir'],
    log,
    hub,
    retriever: {
      topK: 10,
      maxTopK: 100,
      maxQueryChars: 1 << 20,
      candidates: DEFAULTS.candidates,
      rrfK: DEFAULTS.rrfK,
      weights: { bm25: 1, dense: 1 },
      cacheSize: 0,
    },
    encoder: {
      device: args.device,
      threads: args['encoder-threads'],
      batchSize: args['batch-size'],
      ...(args['model-path'] !== undefined ? { modelPath: args['model-path'] } : {}),
    },
    dense: { mmap: true, rescoreFactor: DEFAULTS.rescoreFactor },
    verify: 'sizes',
    batching: { maxBatch: 64, maxWaitMs: 0, maxQueue: 1 << 20, cacheSize: 0 },
  } as unknown as ServeConfig;
  const retriever = await openRetriever(cfg, createServerMetrics());
  try {
    const corpus = retriever.corpus(args.corpus);
    const modes = (args.mode ? args.mode.split(',') : corpus.modes) as SearchMode[];
    for (const m of modes) {
      if (!(SEARCH_MODES as readonly string[]).includes(m))
        throw new RetrieverError('BAD_INPUT', `unknown mode "${m}" in --mode`);
      retriever.modeFor(corpus, m);
    }
    const { loadQueries } = await import('../eval/queries.js');
    const { runEval } = await import('../eval/run-eval.js');
    const { formatEvalTable } = await import('../eval/report.js');
    let queries = await loadQueries(format, queriesPath, args.qrels);
    if (args.limit !== undefined) queries = queries.slice(0, args.limit);
    const t0 = performance.now();
    const rows = await runEval(queries, {
      retriever,
      corpus: args.corpus,
      modes,
      ks,
      evidenceThreshold: args['evidence-threshold'],
      progress: args.progress,
    });
    const secs = (performance.now() - t0) / 1000;
    // the report is the command's output: it goes to stdout (no MCP stream here)
    process.stdout.write(
      `\n${args.corpus}: ${queries.length} queries from ${queriesPath} (${format}), ${secs.toFixed(1)}s\n\n`,
    );
    process.stdout.write(`${formatEvalTable(rows, ks)}\n`);
    if (args.json) {
      writeFileSync(
        args.json,
        `${JSON.stringify({ corpus: args.corpus, queries: queriesPath, format, ks, rows, seconds: secs, manifest: corpus.manifest }, null, 2)}\n`,
      );
      log.info(`wrote ${args.json}`);
    }
  } finally {
    await retriever.close();
  }
}

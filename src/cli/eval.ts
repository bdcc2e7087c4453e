import { writeFileSync } from 'node:fs';
import yargs from 'yargs';
import { DEFAULTS } from '../config.js';
import { RetrieverError } from '../errors.js';
import { EVAL_FORMATS, type EvalFormat } from '../eval/queries.js';
import { SEARCH_MODES, type SearchMode } from '../search/types.js';
import type { Retriever } from '../search/retriever.js';
import type { ServeConfig } from '../server/serve.js';
import { createLogger } from '../util/log.js';
import { failUsage } from './boundary.js';
import { batchPadding, checkInt, ENCODER_RUNTIME_OPTIONS, hubConfig } from './shared-options.js';

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
    .option('ann-recall', {
      type: 'boolean',
      default: false,
      describe:
        "instead of relevance: the dense index's recall@k against exhaustive search, on these queries' vectors, per --ef-search",
    })
    .option('ef-search', {
      type: 'string',
      default: '32,64,128,256,512',
      describe: 'with --ann-recall: comma-separated efSearch values to measure',
    })
    .option('rescore-factor', {
      type: 'number',
      default: DEFAULTS.rescoreFactor,
      describe: 'with --ann-recall: HNSW candidates re-scored exactly, as a multiple of k (as the server does)',
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
  const efs = args['ef-search'].split(',').map(Number);
  for (const ef of efs) checkInt('--ef-search', ef, 1, 100_000);
  checkInt('--rescore-factor', args['rescore-factor'], 1, 100);
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
      maxPadding: batchPadding(args['batch-padding']),
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
    if (args['ann-recall']) {
      await annRecall(
        retriever,
        args.corpus,
        queries.slice(0, args.limit ?? 500).map((q) => q.text),
        {
          efs,
          k: Math.max(...ks),
          rescoreFactor: args['rescore-factor'],
          progress: args.progress,
          json: args.json,
        },
      );
      return;
    }
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

async function annRecall(
  retriever: Retriever,
  corpusName: string,
  texts: string[],
  o: { efs: number[]; k: number; rescoreFactor: number; progress: boolean; json: string | undefined },
): Promise<void> {
  const corpus = retriever.corpus(corpusName);
  const dense = corpus.manifest.dense;
  if (!dense) {
    throw new RetrieverError(
      'MODE_UNAVAILABLE',
      `corpus ${corpusName} has no dense index, so --ann-recall has nothing to measure (rebuild without --no-dense)`,
    );
  }
  const { measureAnnRecall } = await import('../eval/ann-recall.js');
  const vectors = await retriever.embedQueries(corpusName, texts);
  const report = measureAnnRecall({ dir: corpus.dir, dense, queries: vectors, ...o });
  process.stdout.write(
    `\n${corpusName}: dense recall@${o.k} against exhaustive search, ${report.queries} queries, ${report.vectors} vectors (exact pass ${report.exactSeconds.toFixed(1)}s), rescore ×${o.rescoreFactor}\n\n`,
  );
  process.stdout.write(`| efSearch | recall@${o.k} | p50 ms | p99 ms |\n|---|---|---|---|\n`);
  for (const r of report.rows) {
    process.stdout.write(
      `| ${r.efSearch} | ${r.recall.toFixed(4)} | ${r.p50Ms.toFixed(3)} | ${r.p99Ms.toFixed(3)} |\n`,
    );
  }
  process.stdout.write(`\n${describeUnreachable(report.unreachable, report.vectors)}\n`);
  if (o.json)
    writeFileSync(
      o.json,
      `${JSON.stringify({ corpus: corpusName, k: o.k, rescoreFactor: o.rescoreFactor, ...report }, null, 2)}\n`,
    );
}

/** The graph's reachability, for the recall report: misses no efSearch can fix. */
function describeUnreachable(unreachable: number[] | null, nodes: number): string {
  if (unreachable === null) return 'graph: its file layout is unknown to this version, reachability not checked';
  if (unreachable.length === 0) return `graph: every one of its ${nodes} nodes is linked to (reachable by a walk)`;
  const named = unreachable.slice(0, 10).join(', ') + (unreachable.length > 10 ? ', …' : '');
  return (
    `graph: ${unreachable.length} of ${nodes} nodes no link points to (chunks ${named}); no efSearch can return ` +
    'them: rebuild the index with this version, whose build relinks them'
  );
}

import { existsSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { RetrieverError } from '../errors.js';
import type { Argv, CommandModule } from 'yargs';
import { DEFAULTS } from '../config.js';
import type { EvalSetup } from '../app/evaluate.js';
import type { AnnRecallReport } from '../eval/ann-recall.js';
import { EVAL_FORMATS, type EvalFormat } from '../eval/queries.js';
import { formatEvalTable } from '../eval/report.js';
import { cliLogger, exitWhenDone } from './boundary.js';
import { batchPadding, checkIndexDir, checkInt, ENCODER_RUNTIME_OPTIONS, hubConfig } from './shared-options.js';

const PROG = 'retriever-mcp eval';

function evalOptions(y: Argv) {
  return y
    .usage('$0 eval --corpus NAME [--queries FILE --format FORMAT] [options]\n\nScore retrieval against a benchmark.')
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
    .option('ivf-settings', {
      type: 'string',
      describe:
        "with --ann-recall on an IVF index: comma-separated probes:rescore pairs to measure (default: the index's own, then 2, 4, 8 and 16 times the lists)",
    })
    .option('rescore-factor', {
      type: 'number',
      default: DEFAULTS.rescoreFactor,
      describe: 'with --ann-recall: HNSW candidates re-scored exactly, as a multiple of k (as the server does)',
    })
    .option('json', { type: 'string', describe: 'also write the results as JSON to this path' })
    .option('html', {
      type: 'string',
      describe:
        'also write a self-contained HTML report to this path: recall and nDCG curves per mode, and the queries where hybrid lost to an arm with both lists',
    })
    .option('index-dir', { type: 'string', default: DEFAULTS.indexDir })
    .option('model-path', { type: 'string', describe: "query encoder from a local directory (default: the index's)" })
    .options(ENCODER_RUNTIME_OPTIONS)
    .option('progress', { type: 'boolean', default: true });
}

type EvalArgs = Awaited<ReturnType<ReturnType<typeof evalOptions>['parseAsync']>>;

/** `retriever-mcp eval`. */
export const evalCommand: CommandModule = {
  command: 'eval',
  describe: 'score retrieval against a benchmark',
  builder: evalOptions,
  handler: async (args) => {
    try {
      await evalMain(args as unknown as EvalArgs);
    } finally {
      exitWhenDone(PROG);
    }
  },
};

/**
 * retriever-mcp eval: runs a benchmark's queries through the server's own
 * search path and reports recall@k, MRR@10 and nDCG@10 (per question type).
 */
async function evalMain(args: EvalArgs): Promise<void> {
  // an evaluation can take an hour: a report path it cannot write to fails now, not after it
  for (const [flag, path] of [
    ['--json', args.json],
    ['--html', args.html],
  ] as const) {
    if (path !== undefined && !existsSync(dirname(resolve(path)))) {
      throw new RetrieverError(
        'BAD_INPUT',
        `${flag} ${path}: its folder ${dirname(resolve(path))} does not exist: create it or pick another path`,
      );
    }
  }
  const ks = args.k.split(',').map(Number);
  for (const k of ks) checkInt('--k', k, 1, 100);
  if (args.limit !== undefined) checkInt('--limit', args.limit, 1, 10_000_000);
  const efs = args['ef-search'].split(',').map(Number);
  for (const ef of efs) checkInt('--ef-search', ef, 1, 100_000);
  checkInt('--rescore-factor', args['rescore-factor'], 1, 100);
  const ivf = args['ivf-settings']?.split(',').map((pair) => {
    const [probes, rescore] = pair.split(':').map(Number);
    if (probes === undefined || rescore === undefined || pair.split(':').length !== 2)
      throw new RetrieverError('BAD_INPUT', `--ivf-settings: "${pair}" is not probes:rescore (e.g. 64:1000)`);
    checkInt('--ivf-settings probes', probes, 1, 1 << 16);
    checkInt('--ivf-settings rescore', rescore, 1, 1_000_000);
    return { probes, rescore };
  });
  checkIndexDir(args['index-dir']);
  const log = cliLogger('info');
  const setup: EvalSetup = {
    corpus: args.corpus,
    indexDir: args['index-dir'],
    ...(args.queries !== undefined ? { queries: args.queries } : {}),
    ...(args.format !== undefined ? { format: args.format as EvalFormat } : {}),
    ...(args.qrels !== undefined ? { qrels: args.qrels } : {}),
    encoder: {
      device: args.device,
      threads: args['encoder-threads'],
      batchSize: args['batch-size'],
      maxPadding: batchPadding(args['batch-padding']),
      fuseAttention: args['fuse-attention'],
      ...(args['model-path'] !== undefined ? { modelPath: args['model-path'] } : {}),
    },
    hub: hubConfig(args, log, args.progress),
    log,
    progress: args.progress,
  };
  const app = await import('../app/evaluate.js');
  if (args['ann-recall']) {
    const k = Math.max(...ks);
    const report = await app.evaluateAnnRecall(setup, {
      efs,
      ...(ivf ? { ivf } : {}),
      k,
      rescoreFactor: args['rescore-factor'],
      limit: args.limit ?? 500,
    });
    printAnnRecall(args.corpus, k, args['rescore-factor'], report, args.json);
    return;
  }
  const r = await app.evaluate(setup, {
    ...(args.mode ? { modes: args.mode.split(',') } : {}),
    ks,
    ...(args.limit !== undefined ? { limit: args.limit } : {}),
    evidenceThreshold: args['evidence-threshold'],
    ...(args.html !== undefined ? { html: true } : {}),
  });
  // the report is the command's output: it goes to stdout (no MCP stream here)
  process.stdout.write(
    `\n${args.corpus}: ${r.queryCount} queries from ${r.queriesPath} (${r.format}), ${r.seconds.toFixed(1)}s\n\n`,
  );
  process.stdout.write(`${formatEvalTable(r.rows, ks)}\n`);
  if (args.json) {
    const { rows, queriesPath, format, seconds, manifest } = r;
    writeFileSync(
      args.json,
      `${JSON.stringify({ corpus: args.corpus, queries: queriesPath, format, ks, rows, seconds, manifest }, null, 2)}\n`,
    );
    log.info(`wrote ${args.json}`);
  }
  if (args.html !== undefined && r.html !== undefined) {
    writeFileSync(args.html, r.html);
    log.info(`wrote ${args.html} (open it in a browser; it needs no network)`);
  }
}

function printAnnRecall(
  corpusName: string,
  k: number,
  rescoreFactor: number,
  report: AnnRecallReport,
  json: string | undefined,
): void {
  process.stdout.write(
    `\n${corpusName}: dense recall@${k} against exhaustive search, ${report.queries} queries, ${report.vectors} vectors (exact pass ${report.exactSeconds.toFixed(1)}s), rescore ×${rescoreFactor}\n\n`,
  );
  const ivf = report.rows[0]?.probes !== undefined;
  process.stdout.write(
    `| ${ivf ? 'probes:rescore' : 'efSearch'} | recall@${k} | p50 ms | p99 ms |\n|---|---|---|---|\n`,
  );
  for (const row of report.rows) {
    process.stdout.write(
      `| ${row.setting} | ${row.recall.toFixed(4)} | ${row.p50Ms.toFixed(3)} | ${row.p99Ms.toFixed(3)} |\n`,
    );
  }
  if (ivf) process.stdout.write('\nserve with the setting you pick: --ivf-probes P --ivf-rescore R (no rebuild)\n');
  else process.stdout.write(`\n${describeUnreachable(report.unreachable, report.vectors)}\n`);
  if (json) writeFileSync(json, `${JSON.stringify({ corpus: corpusName, k, rescoreFactor, ...report }, null, 2)}\n`);
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

import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { CHUNK_SIZE_BY_FORMAT, DEFAULTS } from '../config.js';
import { RetrieverError } from '../errors.js';
import { CORPUS_FORMATS, type CorpusFormat } from '../ingest/types.js';
import { createLogger } from '../util/log.js';
import { failUsage, runMain } from './boundary.js';

const PROG = 'build-index';

export async function main(argv: string[]): Promise<void> {
  const args = await yargs(argv)
    .scriptName(PROG)
    .usage('$0 --name NAME --input PATH --format FORMAT [options]\n\nBuild the chunk store and indexes of a corpus.')
    .option('name', { type: 'string', describe: 'corpus name (the index directory under --index-dir)' })
    .option('input', { type: 'string', describe: 'corpus file (.jsonl, .json; .gz is read transparently)' })
    .option('format', { choices: CORPUS_FORMATS, describe: 'input format' })
    .option('index-dir', { type: 'string', default: DEFAULTS.indexDir, describe: 'where indexes are written' })
    .option('chunk-size', {
      type: 'number',
      describe: `tokens per chunk, 0 = one chunk per record (default: ${formatChunkDefaults()})`,
    })
    .option('chunk-overlap', {
      type: 'number',
      default: DEFAULTS.chunkOverlap,
      describe: 'tokens shared by consecutive chunks',
    })
    .option('dense', { type: 'boolean', default: false, describe: 'also build the dense (e5 + HNSW) index' })
    .option('resume', {
      type: 'boolean',
      default: false,
      describe: 'continue an interrupted build of the same input and options',
    })
    .option('bm25-k1', { type: 'number', default: DEFAULTS.bm25.k1, describe: 'BM25 k1' })
    .option('bm25-b', { type: 'number', default: DEFAULTS.bm25.b, describe: 'BM25 b' })
    .option('max-postings-in-memory', {
      type: 'number',
      default: DEFAULTS.maxPostingsInMemory,
      describe: 'BM25 postings buffered before spilling a sorted run to disk (12 bytes each)',
    })
    .option('progress', { type: 'boolean', default: true, describe: 'show progress on stderr' })
    .option('quiet', { type: 'boolean', default: false, describe: 'only print errors and the summary' })
    .strict()
    .fail(failUsage(PROG))
    .help()
    .version(false)
    .parseAsync();

  if (!args.name || !args.input || !args.format) {
    throw new RetrieverError('BAD_INPUT', 'build-index needs --name, --input and --format (see build-index --help)');
  }
  const format = args.format as CorpusFormat;
  const chunkSize = args['chunk-size'] ?? CHUNK_SIZE_BY_FORMAT[format];
  const overlap = args['chunk-overlap'];
  checkInt('--chunk-size', chunkSize, 0, 100_000);
  if (chunkSize > 0) checkInt('--chunk-overlap', overlap, 0, chunkSize - 1);
  checkInt('--max-postings-in-memory', args['max-postings-in-memory'], 1000, 2 ** 31);
  if (!(args['bm25-k1'] >= 0) || !(args['bm25-b'] >= 0 && args['bm25-b'] <= 1)) {
    throw new RetrieverError('BAD_INPUT', '--bm25-k1 must be ≥ 0 and --bm25-b within [0, 1]');
  }
  const log = createLogger(args.quiet ? 'warn' : 'info');
  const { buildIndex, formatSummary } = await import('../build/build-index.js');
  const summary = await buildIndex({
    name: args.name,
    input: args.input,
    format,
    indexDir: args['index-dir'],
    chunkSize,
    chunkOverlap: chunkSize > 0 ? overlap : 0,
    bm25: { k1: args['bm25-k1'], b: args['bm25-b'] },
    maxPostingsInMemory: args['max-postings-in-memory'],
    dense: null,
    resume: args.resume,
    rebuildCommand: rebuildCommand(argv),
    log,
    progress: args.progress && !args.quiet,
  });
  process.stderr.write(`${formatSummary(summary)}\n`);
}

function checkInt(flag: string, v: number, min: number, max: number): void {
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new RetrieverError('BAD_INPUT', `${flag} must be an integer from ${min} to ${max}, got ${v}`);
  }
}

function formatChunkDefaults(): string {
  return Object.entries(CHUNK_SIZE_BY_FORMAT)
    .map(([f, n]) => `${f} ${n}`)
    .join(', ');
}

/** The command line that rebuilds this index, without --resume, for error hints. */
function rebuildCommand(argv: string[]): string {
  const kept = argv.filter((a) => a !== '--resume' && a !== '--no-progress' && a !== '--quiet');
  return [PROG, ...kept.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))].join(' ');
}

export function run(): Promise<void> {
  return runMain(PROG, () => main(hideBin(process.argv)));
}

import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { TOOL_VERSION } from '../version.js';
import { failUsage, runMain } from './boundary.js';
import { afterBuild, buildCommand } from './build-index.js';
import { evalCommand } from './eval.js';
import { refuseSseTransport, serveCommand } from './retriever-mcp.js';

const PROG = 'retriever-mcp';

/**
 * The one command-line program: serving (the default command), `build`
 * (alias `build-index`) and `eval`, each a command module. The
 * `build-index` binary is `build` under its own name.
 */
export async function run(argv: string[] = hideBin(process.argv), bin = PROG): Promise<void> {
  const args = bin === 'build-index' ? ['build', ...argv] : argv;
  const sub = args[0] === 'build' || args[0] === 'build-index' ? 'build' : args[0] === 'eval' ? 'eval' : undefined;
  // the name every message and usage error gives the command
  const prog = bin === 'build-index' ? bin : sub ? `${PROG} ${sub}` : PROG;
  const program = yargs(args)
    .scriptName(PROG)
    .usage(
      '$0 --corpus NAME [--corpus NAME2 ...] [options]\n$0 build --corpus PRESET | --name NAME --input PATH --format FORMAT\n$0 eval --corpus NAME --queries FILE --format FORMAT\n\nServe corpora to MCP clients (stdio by default), build an index with `build`, or score retrieval with `eval`.',
    )
    .command(serveCommand(args))
    .command(buildCommand(args.slice(1), prog))
    .command(evalCommand)
    .strict()
    .fail(failUsage(prog))
    .help()
    .version(TOOL_VERSION);
  await runMain(prog, async () => {
    if (sub === undefined) refuseSseTransport(args);
    await program.parseAsync();
  });
  if (sub === 'build') afterBuild();
}

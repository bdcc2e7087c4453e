import { describeError, isRetrieverError, redactSecrets } from '../errors.js';
import { createLogger, type Logger, type LogLevel } from '../util/log.js';

/** The commands' logger: stderr, with any password in a URL replaced by *** (errors.ts redactSecrets). */
export function cliLogger(level: LogLevel): Logger {
  return createLogger(level, (line) => process.stderr.write(redactSecrets(line)));
}

/**
 * The one place errors are caught: a single line on stderr, no stack trace
 * (set RETRIEVER_MCP_DEBUG=1 for one), and a non-zero exit code.
 */
export async function runMain(prog: string, main: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (err) {
    if (isRetrieverError(err, 'STOPPED')) {
      // a stop the user asked for: what was kept and how to go on, not an error
      process.stderr.write(`${prog}: ${describeError(err)}\n`);
      process.exitCode ??= 130;
      return;
    }
    process.stderr.write(`${prog}: error: ${describeError(err)}\n`);
    if (process.env['RETRIEVER_MCP_DEBUG'] && err instanceof Error && err.stack) {
      process.stderr.write(`${err.stack}\n`);
    }
    process.exitCode = isRetrieverError(err, 'BAD_INPUT') ? 2 : 1;
    // a command that failed ends, whatever handle a half-done start left open
    exitWhenDone(prog);
  }
}

/**
 * For one-shot commands (build-index, eval): once the work is done the process
 * must end even if some handle (a worker thread, a socket) was left open, so
 * a script or an RL launcher waiting on it never hangs. The timer is unref'd:
 * it only fires when something else still holds the event loop.
 */
export function exitWhenDone(prog: string, graceMs = 5000): void {
  setTimeout(() => {
    if (process.env['RETRIEVER_MCP_DEBUG']) {
      process.stderr.write(`${prog}: a handle was still open ${graceMs} ms after the work ended; exiting\n`);
    }
    process.exit();
  }, graceMs).unref();
}

/** yargs reports usage errors through this: one line and exit 2, like any other bad input. */
export function failUsage(prog: string) {
  return (msg: string | undefined, err: Error | undefined): never => {
    // a command's own error (thrown by its handler) is not a usage error: runMain reports it
    if (err !== undefined && err.name !== 'YError') throw err;
    process.stderr.write(`${prog}: error: ${msg ?? describeError(err)} (see ${prog} --help)\n`);
    process.exit(2);
  };
}

/**
 * Logging goes to stderr only: in a stdio server stdout carries JSON-RPC and a
 * single stray byte corrupts the stream.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface Logger {
  debug(msg: string): void;
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

export function createLogger(level: LogLevel, write: (line: string) => void = writeStderr): Logger {
  const min = ORDER[level];
  const emit = (lvl: LogLevel, msg: string): void => {
    if (ORDER[lvl] >= min) write(`[retriever-mcp] ${lvl === 'info' ? '' : `${lvl}: `}${msg}\n`);
  };
  return {
    debug: (m) => emit('debug', m),
    info: (m) => emit('info', m),
    warn: (m) => emit('warn', m),
    error: (m) => emit('error', m),
  };
}

function writeStderr(line: string): void {
  process.stderr.write(line);
}

export const silentLogger: Logger = createLogger('silent');

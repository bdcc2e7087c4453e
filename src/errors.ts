/**
 * One error type for everything the product reports to a user. The message
 * names the offending value and says what to do; the code lets callers
 * (HTTP status mapping, tests) branch without parsing text.
 */
export type ErrorCode =
  | 'BAD_INPUT' // a query, flag or file the user gave is invalid
  | 'UNKNOWN_CORPUS'
  | 'MODE_UNAVAILABLE' // e.g. dense search on an index built with --no-dense
  | 'INDEX_MISSING'
  | 'INDEX_INCOMPATIBLE' // built by another format version, model or dimension
  | 'INDEX_CORRUPT' // sizes or checksums do not match the manifest
  | 'MODEL' // the encoder cannot be loaded or run
  | 'DOWNLOAD'
  | 'OVERLOADED' // the request queue is full: retry later
  | 'DEADLINE' // the request ran past its deadline
  | 'NOT_READY' // a corpus is still being built or opened
  | 'BUILD' // a build step failed
  | 'LOCKED' // another build of the same index holds its lock
  | 'STOPPED' // work stopped by a signal or a shutdown (a build keeps what --resume needs)
  | 'IO' // a file could not be read or written
  | 'ENGINE' // the search engine behind --backend failed or cannot be reached
  | 'INTERNAL';

export class RetrieverError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    // a message may quote a URL or a command line holding a password (--backend https://user:pw@host)
    super(redactSecrets(message), options);
    this.name = 'RetrieverError';
    this.code = code;
  }
}

export function isRetrieverError(err: unknown, code?: ErrorCode): err is RetrieverError {
  return err instanceof RetrieverError && (code === undefined || err.code === code);
}

/**
 * The text with every password in a URL's user info replaced by `***`
 * (`https://user:secret@host` → `https://user:***@host`). Applied to every
 * RetrieverError message, every log line the CLI writes, and every command
 * line or manifest a build stores, so a credential given in --backend or
 * HF_ENDPOINT is never shown, logged or written down.
 */
export function redactSecrets(text: string): string {
  return (
    text
      .replace(/\b([a-z][a-z0-9+.-]*:\/\/)([^/\s:@'"]*):([^/\s@'"]+)@/gi, '$1$2:***@')
      // user info with no scheme (`--backend user:secret@host:9200`), at the start of a word or a quoted value
      .replace(/(^|[\s"'(=,])([^/\s:@'"(=,]+):([^/\s@'"]+)@(?=[^\s@])/g, '$1$2:***@')
  );
}

/** The one-line text shown to a user for any thrown value, never a stack. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return redactSecrets(err.message.split('\n')[0] ?? err.name);
  return redactSecrets(String(err));
}

/**
 * A short, safe rendering of a value a client sent, for error messages: a
 * string's first characters (quoted), a number or boolean as is, and only the
 * kind of a list or an object. Never the whole value: a message must not echo
 * a megabyte back, and stringifying a value nested 100k deep overflows the stack.
 */
export function describeValue(v: unknown, max = 60): string {
  if (typeof v === 'string') {
    const shown = v.length > max ? `${v.slice(0, max)}…` : v;
    return `${JSON.stringify(shown)}${v.length > max ? ` (${v.length} characters)` : ''}`;
  }
  if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) return String(v);
  if (Array.isArray(v)) return `a list of ${v.length}`;
  return `a ${typeof v === 'object' ? 'JSON object' : typeof v}`;
}

/**
 * Text from a file or a parser's message, safe to print: control characters
 * and other unprintables as `\\xNN` / `\\uNNNN`, at most `max` characters. A
 * binary file's parse error once wrote its raw bytes to the terminal.
 */
export function printable(text: string, max = 160): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return cut.replace(/[\u0000-\u001f\u007f-\u009f\ud800-\udfff\ufffd]/g, (c) => {
    const code = c.charCodeAt(0);
    return code < 256 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

import { describe, expect, it } from 'vitest';
import { printable, redactSecrets, RetrieverError } from '../../src/errors.js';

describe('redactSecrets', () => {
  it.each([
    ['https://user:secret@host:9200/x', 'https://user:***@host:9200/x'],
    // issue 47, item 11: a --backend with no scheme echoed the password
    ['got "user:secret@127.0.0.1:9"', 'got "user:***@127.0.0.1:9"'],
    ['--backend=lab:pw@node1:9200,lab:pw@node2:9200', '--backend=lab:***@node1:9200,lab:***@node2:9200'],
  ])('%s', (text, redacted) => {
    expect(redactSecrets(text)).toBe(redacted);
    expect(new RetrieverError('BAD_INPUT', text).message).toBe(redacted);
  });

  it('leaves text without user info alone', () => {
    for (const text of ['at 12:30 on host:9200', 'http://127.0.0.1:8099/mcp', 'a@b is an address'])
      expect(redactSecrets(text)).toBe(text);
  });
});

describe('printable', () => {
  it('escapes what a terminal would act on, and cuts long text', () => {
    expect(printable('\u007fELF\u0002\u0001\u0000\u001b[2J')).toBe('\\x7fELF\\x02\\x01\\x00\\x1b[2J');
    expect(printable('x'.repeat(500), 10)).toBe(`${'x'.repeat(10)}…`);
    expect(printable('naïve – 東京')).toBe('naïve – 東京');
  });
});

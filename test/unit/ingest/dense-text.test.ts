import { describe, expect, it } from 'vitest';
import { formatContents } from '../../../src/ingest/chunker.js';
import { DEFAULT_DENSE_TEXT, denseText } from '../../../src/ingest/dense-text.js';

describe('the text the dense arm embeds', () => {
  const { contents, bodyStart } = formatContents('Pulp Fiction', 'Pulp Fiction is a 1994 crime film.');

  it('is the stored `"Title"\\nbody` under contents, and `Title body` under title-body', () => {
    expect(contents).toBe('"Pulp Fiction"\nPulp Fiction is a 1994 crime film.');
    expect(denseText('contents', contents, bodyStart)).toBe(contents);
    expect(denseText('title-body', contents, bodyStart)).toBe('Pulp Fiction Pulp Fiction is a 1994 crime film.');
  });

  it('keeps an untitled chunk, a title alone and a quote inside a title as they are', () => {
    expect(denseText('title-body', 'no title here', 0)).toBe('no title here');
    const t = formatContents('Title only', '');
    expect(denseText('title-body', t.contents, t.bodyStart)).toBe('Title only');
    const q = formatContents('The "Boss"', 'body');
    expect(denseText('title-body', q.contents, q.bodyStart)).toBe('The "Boss" body');
  });

  it('follows each format: BEIR as BEIR and MTEB embed it, wiki-18 as the FAISS vectors it imports were built', () => {
    expect(DEFAULT_DENSE_TEXT.beir).toBe('title-body');
    expect(DEFAULT_DENSE_TEXT.wiki18).toBe('contents');
  });
});

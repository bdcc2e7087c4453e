import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILD_OPTIONS } from '../../../src/cli/build-index.js';
import { SERVE_OPTIONS } from '../../../src/cli/retriever-mcp.js';
import { ENCODER_RUNTIME_OPTIONS } from '../../../src/cli/shared-options.js';
import { REPO_ROOT } from '../../helpers/paths.js';

// Interfaces, item 2: every command a message or a doc tells a user to run is `retriever-mcp build`
// (outside this clone `npx build-index` is another npm package), and every flag it names exists.
const SRC = join(REPO_ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The string and template literals of a file (comments left out), roughly: enough to find hints. */
function literals(text: string): string[] {
  const noComments = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return [...noComments.matchAll(/`(?:[^`\\]|\\.)*`|'(?:[^'\\\n]|\\.)*'/g)].map((m) => m[0]);
}

const buildFlags = new Set([...Object.keys(BUILD_OPTIONS), ...Object.keys(ENCODER_RUNTIME_OPTIONS), 'help', 'version']);
const serveFlags = new Set([...Object.keys(SERVE_OPTIONS), ...Object.keys(ENCODER_RUNTIME_OPTIONS), 'help', 'version']);

describe('the commands messages name', () => {
  const hints = sources(SRC).flatMap((file) =>
    literals(readFileSync(file, 'utf8')).map((text) => ({ file: file.slice(REPO_ROOT.length + 1), text })),
  );

  it('found the hints to check', () => {
    expect(hints.filter((h) => h.text.includes('retriever-mcp build')).length).toBeGreaterThan(5);
  });

  it('never tell a user to run `build-index` or `npx build-index`', () => {
    const bad = hints.filter((h) => /(`|npx |run |with )build-index\b/.test(h.text));
    expect(bad).toEqual([]);
  });

  it('name only flags the command has', () => {
    const wrong: string[] = [];
    for (const { file, text } of hints) {
      for (const m of text.matchAll(/retriever-mcp( build)?((?: [^`']*?)?)(?=`|'|$)/g)) {
        const flags = [...(m[2] ?? '').matchAll(/--(?:no-)?([a-z][a-z0-9-]*)/g)].map((f) => f[1] as string);
        const known = m[1] ? buildFlags : serveFlags;
        for (const f of flags) if (!known.has(f)) wrong.push(`${file}: --${f} in ${text.slice(0, 120)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('in the docs too', () => {
    for (const doc of ['README.md', 'docs/guide.md', 'corpora/README.md']) {
      const text = readFileSync(join(REPO_ROOT, doc), 'utf8');
      expect(text, doc).not.toMatch(/npx build-index/);
      for (const line of text.split('\n').filter((l) => /retriever-mcp build /.test(l))) {
        for (const f of line.matchAll(/--(?:no-)?([a-z][a-z0-9-]*)/g)) {
          expect(buildFlags.has(f[1] as string) || serveFlags.has(f[1] as string), `${doc}: ${line}`).toBe(true);
        }
      }
    }
  });
});

// The house rules for the docs, run by `npm run check`: each front document stays under its size
// (README is a front page, DESIGN a map, BENCHMARKS rendered tables, CHANGELOG release notes;
// history goes to git and docs/lab-notes); every relative link in a Markdown file of the repository
// points at a file that exists; and the user's documents (README and the guide) link only to files
// the npm package carries, so read from the tarball they have no dead links. Sizes are in kB of
// 1,000 bytes.
//
//   node scripts/check-docs.mjs [--root DIR]
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, resolve } from 'node:path';

const LIMITS = { 'README.md': 12, 'DESIGN.md': 25, 'BENCHMARKS.md': 30, 'CHANGELOG.md': 12 };

const i = process.argv.indexOf('--root');
const root = resolve(i > 0 ? process.argv[i + 1] : join(dirname(new URL(import.meta.url).pathname), '..'));
const problems = [];

for (const [file, kb] of Object.entries(LIMITS)) {
  const path = join(root, file);
  if (!existsSync(path)) continue;
  const size = statSync(path).size;
  if (size > kb * 1000)
    problems.push(
      `${file} is ${(size / 1000).toFixed(1)} kB, over its ${kb} kB limit: move history to docs/lab-notes ` +
        `(or, for BENCHMARKS.md, trim what bench/suites.ts renders)`,
    );
}

// what `npm pack` would put in the tarball; npm's own warnings (npm 11 warns of a `nodedir` in
// ~/.npmrc, which node-gyp still reads) are not this check's findings, so its stderr is kept back
const packed = new Set(
  JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  )[0].files.map((f) => f.path),
);
const USER_DOCS = ['README.md', 'docs/guide.md'];
const tracked = execFileSync('git', ['ls-files', '*.md'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
for (const doc of tracked) {
  const text = readFileSync(join(root, doc), 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '');
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1].split('#')[0];
    if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const path = normalize(join(dirname(doc), target)).replace(/\/$/, '');
    if (!existsSync(join(root, path))) {
      problems.push(`${doc} links to ${m[1]}, which does not exist`);
      continue;
    }
    const hash = m[1].split('#')[1];
    if (hash && path.endsWith('.md') && !anchorsOf(join(root, path)).has(hash))
      problems.push(`${doc} links to ${m[1]}, but ${path} has no heading with that anchor`);
    if (!USER_DOCS.includes(doc)) continue;
    const inPack = packed.has(path) || [...packed].some((p) => p.startsWith(`${path}/`));
    if (!inPack)
      problems.push(
        `${doc} links to ${m[1]}, which the npm package does not carry: add it to package.json's files, or link elsewhere`,
      );
  }
}

/** GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces as '-'. */
function anchorsOf(path) {
  const seen = new Map();
  const out = new Set();
  const text = readFileSync(path, 'utf8').replace(/```[\s\S]*?```/g, '');
  for (const [, title] of text.matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = title
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

for (const p of problems) process.stderr.write(`check-docs: ${p}\n`);
if (problems.length > 0) process.exitCode = 1;
else
  process.stdout.write(
    `check-docs: ${Object.keys(LIMITS).join(', ')} within their limits; ${packed.size} packed files, no dead links\n`,
  );

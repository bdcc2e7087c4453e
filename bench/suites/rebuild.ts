/**
 * A rebuild after a small change against a full build, with a real model:
 * 2WikiMultiHopQA-200's 1,585 passages as a folder of Markdown notes (one
 * per article title, so a note holds several passages), e5-small-v2 fp32.
 *
 *   npm run bench -- rebuild [--model e5-small-v2] [--changed 0.01]
 *
 * Builds the folder from nothing; changes `--changed` of its notes (a new
 * sentence in each) and rebuilds; then rebuilds with --no-reuse-vectors, the
 * cost without re-use. Reports each build's wall time and the chunks it
 * embedded and re-used (from the build's own summary line). Writes
 * bench/results/rebuild.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fetchRealModel, modelFetchOptions, REAL_MODELS, variantArgs } from '../../scripts/models/real-models.js';
import { arg, BENCH_DATA, printTable, prng, ROOT, SHARED, writeResult } from '../lib/common.js';

const model = arg('model', 'e5-small-v2') as string;
const changed = Number(arg('changed', '0.01'));
const log = (line: string): void => void process.stderr.write(`${line}\n`);
if (!REAL_MODELS[model]) throw new Error(`unknown --model ${model}: ${Object.keys(REAL_MODELS).join(', ')}`);

const work = join(BENCH_DATA, 'rebuild');
const notes = join(work, 'notes');
const indexDir = join(work, 'indexes');
rmSync(work, { recursive: true, force: true });
mkdirSync(notes, { recursive: true });

// the passages grouped into notes by title, as a wiki export would lay them out
const byTitle = new Map<string, string[]>();
for (const line of readFileSync(join(SHARED, 'data/2wiki-200/corpus.jsonl'), 'utf8').split('\n')) {
  if (line.trim() === '') continue;
  const contents = (JSON.parse(line) as { contents: string }).contents;
  const nl = contents.indexOf('\n');
  const title = contents.slice(0, nl).replace(/^"|"$/g, '');
  byTitle.set(title, [...(byTitle.get(title) ?? []), contents.slice(nl + 1)]);
}
const files: string[] = [];
[...byTitle.entries()].forEach(([title, paras], i) => {
  const file = join(notes, `${String(i).padStart(4, '0')}.md`);
  writeFileSync(file, `# ${title}\n\n${paras.join('\n\n')}\n`);
  files.push(file);
});

const modelDir = await fetchRealModel(model, modelFetchOptions(log));
const buildArgs = [
  join(ROOT, 'bin', 'retriever-mcp.js'),
  'build',
  ...['--name', 'notes', '--input', notes, '--index-dir', indexDir, '--model-path', modelDir],
  ...variantArgs(model),
  '--no-progress',
];

function build(extra: string[] = []): { seconds: number; chunks: number; reused: number; embedded: number } {
  const t = performance.now();
  const r = spawnSync(process.execPath, [...buildArgs, ...extra], {
    encoding: 'utf8',
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (r.status !== 0) throw new Error(`build failed (${r.status}): ${r.stderr}`);
  const err = r.stderr;
  const seconds = (performance.now() - t) / 1000;
  const chunks = Number(/built notes: [\d,.k]+ documents, ([\d,]+) chunks/.exec(err)?.[1]?.replace(/,/g, '') ?? NaN);
  const m = /re-used the vectors of ([\d,]+) unchanged chunks and embedded ([\d,]+) new or changed/.exec(err);
  const reused = m ? Number((m[1] as string).replace(/,/g, '')) : 0;
  return { seconds, chunks, reused, embedded: m ? Number((m[2] as string).replace(/,/g, '')) : chunks };
}

log(`full build of ${files.length} notes with ${model}…`);
const full = build();
const random = prng(7);
const picked = new Set<number>();
const want = Math.max(1, Math.round(files.length * changed));
while (picked.size < want) picked.add(Math.floor(random() * files.length));
for (const i of picked) {
  const f = files[i] as string;
  writeFileSync(f, `${readFileSync(f, 'utf8')}\nAn added sentence changes this note, number ${i}.\n`);
}
log(`rebuild after changing ${picked.size} of ${files.length} notes…`);
const rebuild = build();
log('rebuild with --no-reuse-vectors…');
const everything = build(['--no-reuse-vectors']);

const rows = [
  { build: 'full build', ...full },
  { build: `after changing ${picked.size} of ${files.length} notes`, ...rebuild },
  { build: 'the same, --no-reuse-vectors', ...everything },
].map((r) => ({
  build: r.build,
  'wall s': Number(r.seconds.toFixed(1)),
  chunks: r.chunks,
  embedded: r.embedded,
  're-used': r.reused,
  'time ÷ full build': Number((r.seconds / full.seconds).toFixed(3)),
}));
printTable('Rebuild after a small change, against a full build', rows);
writeResult('rebuild', {
  model,
  notes: files.length,
  changed_notes: picked.size,
  rows,
  summary: {
    rebuild_over_full: Number((rebuild.seconds / full.seconds).toFixed(3)),
    embedded_share: Number((rebuild.embedded / rebuild.chunks).toFixed(4)),
  },
});

/**
 * A folder served with one command (issue 57): `retriever-mcp --input DIR` over 1,585 Markdown
 * notes (2Wiki's paragraphs, one a file) with the real e5-small-v2. Measures the first start (time
 * until BM25 answers while the vectors are embedded, and until every arm is in) and then, for
 * `--edits` files rewritten one after another, the time from the save to the note's first hit,
 * by BM25 (a word only the new text holds) and by dense (its new sentence as the query, dense
 * alone).
 *
 *   npm run bench -- live-folder [--edits 10]
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { arg, BENCH_DATA, printTable, SHARED, summarize, writeResult } from '../lib/common.js';
import { startServer } from '../lib/server.js';
import { fetchRealModel, modelFetchOptions } from '../../scripts/models/real-models.js';

const edits = Number(arg('edits', '10'));
const log = (line: string): void => void process.stderr.write(`${line}\n`);
const model = await fetchRealModel('e5-small-v2', modelFetchOptions(log));
const root = join(BENCH_DATA, 'live-folder');
const notes = join(root, 'notes');
rmSync(root, { recursive: true, force: true });
const lines = readFileSync(join(SHARED, 'data/2wiki-200/corpus.jsonl'), 'utf8').trim().split('\n');
lines.forEach((line, i) => {
  const { contents } = JSON.parse(line) as { contents: string };
  const nl = contents.indexOf('\n');
  mkdirSync(join(notes, `d${i % 16}`), { recursive: true });
  writeFileSync(
    join(notes, `d${i % 16}`, `note-${i}.md`),
    `# ${contents.slice(0, nl).replace(/^"|"$/g, '')}\n\n${contents.slice(nl + 1)}\n`,
  );
});

const t0 = performance.now();
const srv = await startServer(
  ['--input', notes, '--index-dir', join(root, 'indexes'), '--model-path', model, '--cache-size', '0'],
  { waitForReady: false },
);
// a failed run must not leave its server behind: it would hold the folder's index for the next
process.on('exit', () => void srv.child.kill('SIGKILL'));
const since = (t: number): number => (performance.now() - t) / 1000;
async function until(ok: () => Promise<boolean>, limitS: number): Promise<number> {
  const t = performance.now();
  while (since(t) < limitS) {
    if (await ok().catch(() => false)) return since(t);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`not within ${limitS} s`);
}
const ready = async (q: string): Promise<boolean> => (await fetch(`${srv.url}/ready${q}`)).status === 200;
await until(() => ready('?mode=bm25'), 600);
const bm25S = since(t0);
await until(() => ready(''), 3600);
const allS = since(t0);
log(`first start: BM25 after ${bm25S.toFixed(1)} s, every arm after ${allS.toFixed(1)} s`);

async function top(query: string, mode: string): Promise<string | undefined> {
  const r = await fetch(`${srv.url}/retrieve`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ queries: [query], topk: 1, mode }),
  });
  const body = (await r.json()) as { result: Array<Array<{ id?: string; document?: { id: string } }>> };
  const hit = body.result[0]?.[0];
  return hit?.id ?? hit?.document?.id;
}

const WORDS = ['amber', 'basalt', 'cobalt', 'dune', 'ember', 'fjord', 'garnet', 'heron', 'iris', 'juniper'];
const toBm25: number[] = [];
const toDense: number[] = [];
for (let e = 0; e < edits; e++) {
  const i = 100 + e * 97;
  const rel = `d${i % 16}/note-${i}.md`;
  const token = `zq${e}x${WORDS[e % WORDS.length]}`;
  const sentence = `The ${WORDS[e % WORDS.length]} lighthouse keeper ${token} counted migrating whales every dawn in ${1900 + e}.`;
  const path = join(notes, rel);
  const t = performance.now();
  // the note rewritten: a sentence appended to a long paragraph moves its vector too little for
  // that sentence to find it first by dense search (the first run waited 300 s in vain)
  writeFileSync(path, `# Lighthouse log ${e}\n\n${sentence}\n`);
  toBm25.push(await until(async () => (await top(token, 'bm25'))?.startsWith(rel) === true, 120));
  await until(async () => (await top(sentence, 'dense'))?.startsWith(rel) === true, 300);
  toDense.push(since(t));
}
await srv.stop();

const b = summarize(toBm25.map((s) => s * 1000));
const d = summarize(toDense.map((s) => s * 1000));
const rows = [
  { what: 'first start, 1,585 notes: BM25 answers after', seconds: Number(bm25S.toFixed(1)) },
  { what: 'first start: every arm (hybrid) after', seconds: Number(allS.toFixed(1)) },
  { what: `an edit saved → found by BM25, p50 of ${edits}`, seconds: Number((b.p50 / 1000).toFixed(2)) },
  { what: 'an edit saved → found by BM25, slowest', seconds: Number(Math.max(...toBm25).toFixed(2)) },
  { what: `an edit saved → found by dense, p50 of ${edits}`, seconds: Number((d.p50 / 1000).toFixed(2)) },
  { what: 'an edit saved → found by dense, slowest', seconds: Number(Math.max(...toDense).toFixed(2)) },
];
printTable('A folder served with --input (e5-small-v2, 1,585 notes)', rows);
writeResult('live-folder', { model: 'e5-small-v2', notes: lines.length, edits, rows, toBm25, toDense });

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INDEX_FILES } from '../../src/index/layout.js';
import { writeJsonl } from '../helpers/build.js';
import { tinyBuildArgs } from '../helpers/encoder.js';
import { connectStdio, runBin, type ToolText } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir } from '../helpers/paths.js';

const tmp = makeTempDir();
const WORDS = ['river', 'king', 'film', 'war', 'music', 'ocean', 'science', 'city', 'bridge', 'novel'];
const corpus = (tag: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: String(i),
    contents: `"${tag} ${i}"\n${Array.from({ length: 30 }, (_, j) => WORDS[(i * 3 + j * 7) % WORDS.length]).join(' ')} ${tag} ${i}`,
  }));
const QUERIES = ['river king', 'film about war', 'ocean science city'];

const buildArgs = (input: string, indexDir: string, extra: string[] = []) => [
  ...tinyBuildArgs('c', input, indexDir),
  '--embed-window',
  '64',
  '--threads',
  '0',
  '--no-progress',
  ...extra,
];

async function answers(indexDir: string): Promise<string> {
  const s = await connectStdio(['--corpus', 'c', '--index-dir', indexDir, '--verify', 'full']);
  try {
    const out: unknown[] = [];
    for (const mode of ['hybrid', 'dense', 'bm25']) {
      for (const q of QUERIES) {
        const r = (await s.client.callTool({ name: 'search', arguments: { query: q, top_k: 5, mode } })) as ToolText;
        out.push(r.structuredContent);
      }
    }
    return JSON.stringify(out);
  } finally {
    await s.close();
  }
}

function killAfter(args: string[], ms: number): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN.build, ...args], { stdio: 'ignore' });
    const t = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('exit', (code) => {
      clearTimeout(t);
      resolve(code);
    });
  });
}

describe.skipIf(!HAS_SHARED)('builds survive SIGKILL at random points', () => {
  let v1: string;
  let v2: string;
  beforeAll(() => {
    v1 = writeJsonl(tmp.dir, 'v1.jsonl', corpus('old', 300));
    v2 = writeJsonl(tmp.dir, 'v2.jsonl', corpus('new', 2500));
  });
  afterAll(tmp.cleanup);

  it('the previous index keeps answering identically, and a plain re-run finishes with the same files', async () => {
    const live = join(tmp.dir, 'live');
    expect(runBin(BIN.build, buildArgs(v1, live)).status).toBe(0);
    const before = await answers(live);

    // an uninterrupted build of the new input, elsewhere: the reference, and
    // its duration scales the kill times, so kills land mid-build on fast and
    // slow machines alike
    const clean = join(tmp.dir, 'clean');
    const t0 = Date.now();
    expect(runBin(BIN.build, buildArgs(v2, clean)).status).toBe(0);
    const buildMs = Date.now() - t0;
    const after = await answers(clean);
    expect(after).not.toBe(before);

    // kill the rebuild several times, at random moments
    let seed = 7;
    const rand = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const kills: number[] = [];
    for (let i = 0; i < 4; i++) {
      const ms = Math.round(buildMs * (0.1 + rand() * 0.8));
      kills.push(ms);
      // a plain re-run continues what the kill left (and says so)
      const code = await killAfter(buildArgs(v2, live), ms);
      if (code === 0) break; // finished before the kill: nothing left to resume
      // a reader sees the old index or the complete new one, never a mix; the
      // new one when the kill landed after the atomic swap but before exit
      const now = await answers(live);
      expect(now === before || now === after, `answers after a kill at ${ms} ms are neither old nor new`).toBe(true);
      if (now === after) break;
    }

    const r = runBin(BIN.build, buildArgs(v2, live));
    expect(r.status, r.stderr).toBe(0);
    for (const f of [INDEX_FILES.vectors, INDEX_FILES.postings, INDEX_FILES.norms]) {
      expect(
        readFileSync(join(live, 'c', f)).equals(readFileSync(join(clean, 'c', f))),
        `${f} after kills at ${kills.join(', ')} ms (uninterrupted build ${buildMs} ms)`,
      ).toBe(true);
    }
    expect(await answers(live)).toBe(after);
  }, 240_000);
});

import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TINY_MODEL } from '../helpers/encoder.js';
import { startHttpServer, type RunningServer } from '../helpers/http-server.js';
import { connectHttp2026, textOf } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir, sharedPath } from '../helpers/paths.js';
import { writeSlowModel } from '../helpers/slow-model.js';

// Issue 57: a folder served with one command (`retriever-mcp --input DIR`) answers BM25 while its
// first build embeds, and stays current while it serves: edits, renames, deletions and bursts
// reach search without a rebuild command, and a crash mid-update leaves the last published state.
const tmp = makeTempDir('rmcp-live-');
afterAll(() => tmp.cleanup());

/** 2Wiki's 1,585 passages as Markdown files, one a title, in 16 folders. */
function writeNotes(dir: string, limit = Infinity): string[] {
  const lines = readFileSync(sharedPath('data/2wiki-200/corpus.jsonl'), 'utf8').trim().split('\n').slice(0, limit);
  const paths: string[] = [];
  lines.forEach((line, i) => {
    const { contents } = JSON.parse(line) as { contents: string };
    const nl = contents.indexOf('\n');
    const title = contents.slice(0, nl).replace(/^"|"$/g, '');
    const rel = `d${i % 16}/note-${i}.md`;
    mkdirSync(join(dir, `d${i % 16}`), { recursive: true });
    writeFileSync(join(dir, rel), `# ${title}\n\n${contents.slice(nl + 1)}\n`);
    paths.push(rel);
  });
  return paths;
}

/** The ids BM25 returns for `q` over POST /retrieve (Search-R1's route), best first. */
async function bm25Ids(url: string, q: string): Promise<string[]> {
  const r = await fetch(`${url}/retrieve`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ queries: [q], topk: 3, mode: 'bm25', return_scores: false }),
  });
  const body = (await r.json()) as { result?: Array<Array<{ id?: string; document?: { id: string } }>> };
  if (r.status !== 200) throw new Error(`retrieve answered ${r.status}: ${JSON.stringify(body)}`);
  return (body.result?.[0] ?? []).map((h) => h.id ?? h.document?.id ?? '');
}

/** Polls until `ok` holds; returns the seconds it took, or throws after `limitS`. */
async function until(what: string, ok: () => Promise<boolean>, limitS: number): Promise<number> {
  const t0 = performance.now();
  while ((performance.now() - t0) / 1000 < limitS) {
    if (await ok().catch(() => false)) return (performance.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: not within ${limitS} s`);
}

describe.skipIf(!HAS_SHARED)('a folder served with --input', () => {
  it('answers BM25 while the first build embeds, says so, refuses what is not built, then serves hybrid', async () => {
    const notes = join(tmp.dir, 'first');
    writeNotes(notes);
    // a real encoder that takes many seconds over 1,585 notes (test/helpers/slow-model.ts)
    const slow = writeSlowModel(join(tmp.dir, 'slow-model'), { hidden: 512, layers: 8 });
    const srv = await startHttpServer(
      ['--input', notes, '--index-dir', join(tmp.dir, 'idx-first'), '--model-path', slow],
      {},
      { waitForReady: false },
    );
    try {
      const t0 = performance.now();
      await until('BM25 ready', async () => (await fetch(`${srv.url}/ready?mode=bm25`)).status === 200, 240);
      process.stderr.write(
        `first build: BM25 answered ${((performance.now() - t0) / 1000).toFixed(1)} s after start\n`,
      );
      // every arm: not yet, and it says what is still coming
      const full = await fetch(`${srv.url}/ready`);
      expect(full.status).toBe(503);
      expect(await full.text()).toMatch(/first: bm25 ready; dense/);
      expect(await bm25Ids(srv.url, 'Maheen Khan fashion designer')).toContain('d0/note-0.md#0');

      const c = await connectHttp2026(`${srv.url}/mcp`);
      try {
        const fallback = (await c.callTool({ name: 'search', arguments: { query: 'Maheen Khan fashion' } })) as {
          isError?: boolean;
          content: Array<{ text: string }>;
          structuredContent: { mode: string; note?: string; results: Array<{ id: string }> };
        };
        expect(fallback.isError).toBeFalsy();
        expect(fallback.structuredContent.mode).toBe('bm25');
        expect(fallback.structuredContent.note).toMatch(/dense arm of corpus first is still being built/);
        expect(fallback.content[0]?.text).toMatch(/^Note: answered with BM25 alone/);
        // a mode asked for by name is refused until it is there, never replaced
        const hybrid = await c.callTool({ name: 'search', arguments: { query: 'Maheen Khan', mode: 'hybrid' } });
        expect(hybrid.isError).toBe(true);
        expect(textOf(hybrid)).toMatch(/mode "hybrid" of corpus first is not ready yet: dense/);
        const list = (await c.callTool({ name: 'list_corpora', arguments: {} })) as {
          structuredContent: { corpora: Array<{ status: { state: string; serving?: string[] } }> };
        };
        expect(list.structuredContent.corpora[0]?.status).toMatchObject({ state: 'building', serving: ['bm25'] });
        expect(textOf(list)).toMatch(/first: bm25 ready; dense/);
      } finally {
        await c.close();
      }

      await until('every arm ready', async () => (await fetch(`${srv.url}/ready`)).status === 200, 600);
      const c2 = await connectHttp2026(`${srv.url}/mcp`);
      try {
        const r = (await c2.callTool({ name: 'search', arguments: { query: 'Maheen Khan fashion' } })) as {
          structuredContent: { mode: string; note?: string };
        };
        expect(r.structuredContent.mode).toBe('hybrid');
        expect(r.structuredContent.note).toBeUndefined();
      } finally {
        await c2.close();
      }
    } finally {
      await srv.stop();
    }
  }, 900_000);

  describe('kept current while serving (tiny e5)', () => {
    const notes = join(tmp.dir, 'live');
    const indexDir = join(tmp.dir, 'idx-live');
    let srv: RunningServer | undefined;
    afterAll(async () => {
      await srv?.stop();
    });
    const args = ['--input', notes, '--index-dir', indexDir, '--model-path', TINY_MODEL, '--cache-size', '0'];
    const count = (re: RegExp): number => (srv?.stderr().match(re) ?? []).length;
    const published = (): number => count(/changed paths published in/g);
    /** Waits until every update that started has been published or has failed. */
    const idle = async (): Promise<void> => {
      await until(
        'no update in flight',
        async () => count(/: updating /g) === count(/published in|the update failed|another build holds the index/g),
        60,
      );
    };

    it('an edit, a rename and a deletion reach BM25 within seconds', async () => {
      writeNotes(notes, 400);
      srv = await startHttpServer(args);
      const s = srv;
      const edited = join(notes, 'd3/note-3.md');
      writeFileSync(edited, `${readFileSync(edited, 'utf8')}\nThe quokkaflorp migrates at dawn.\n`);
      const found = await until(
        'the edit',
        async () => (await bm25Ids(s.url, 'quokkaflorp'))[0]?.startsWith('d3/note-3.md') ?? false,
        30,
      );
      process.stderr.write(`live folder: an edit found by BM25 ${found.toFixed(2)} s after the save\n`);

      renameSync(edited, join(notes, 'd3/renamed.md'));
      await until(
        'the rename',
        async () => {
          const ids = await bm25Ids(s.url, 'quokkaflorp');
          return ids[0]?.startsWith('d3/renamed.md') === true && !ids.some((id) => id.startsWith('d3/note-3.md'));
        },
        30,
      );
      rmSync(join(notes, 'd3/renamed.md'));
      await until('the deletion', async () => (await bm25Ids(s.url, 'quokkaflorp')).length === 0, 30);
      expect(s.child.exitCode).toBeNull();
    }, 180_000);

    it('a burst of 300 new files is one or two updates, and every file is found', async () => {
      const s = srv as RunningServer;
      // the deletion above answers BM25 before it is published: not counted here
      await idle();
      const before = published();
      const burst = join(tmp.dir, 'burst');
      writeNotes(burst, 700);
      // a checkout that adds 300 files at once
      for (let d = 0; d < 16; d++) cpSync(join(burst, `d${d}`), join(notes, `b${d}`), { recursive: true });
      await until(
        'the burst',
        async () => (await bm25Ids(s.url, readTitle(burst, 'd15/note-687.md')))[0] === 'b15/note-687.md#0',
        60,
      );
      // coalesced: the watcher waits for quiet (or 2 s) before it updates, and what arrives
      // during an update makes one more after it
      await new Promise((r) => setTimeout(r, 1500));
      await idle();
      expect(published() - before).toBeGreaterThanOrEqual(1);
      expect(published() - before).toBeLessThanOrEqual(2);
    }, 180_000);

    it('a crash mid-update leaves the last published state, and the next start catches up', async () => {
      const s = srv as RunningServer;
      writeFileSync(join(notes, 'd1/crash.md'), '# Crash\n\nThe zebrafinch sings before the kill.\n');
      // the update starts once the folder is quiet (300 ms); the kill lands in it or just before
      await new Promise((r) => setTimeout(r, 450));
      s.child.kill('SIGKILL');
      await new Promise((r) => s.child.once('exit', r));
      srv = await startHttpServer(args);
      const again = srv;
      // the published state opened whole (every checksum is checked in the background)
      expect((await fetch(`${again.url}/ready`)).status).toBe(200);
      await until('the catch-up', async () => (await bm25Ids(again.url, 'zebrafinch'))[0] === 'd1/crash.md#0', 60);
      expect(again.stderr()).not.toMatch(/INDEX_CORRUPT|damaged/);
    }, 180_000);
  });

  it('a bad --input is an error that names it', async () => {
    const file = join(tmp.dir, 'a-file.md');
    writeFileSync(file, '# x\n');
    for (const [given, want] of [
      [file, /is a file, not a folder/],
      [join(tmp.dir, 'nowhere'), /no such folder/],
    ] as const) {
      const child = spawn(process.execPath, [BIN.server, '--input', given, '--index-dir', join(tmp.dir, 'x')], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const code = await new Promise<number | null>((r) => child.on('exit', r));
      expect(code).not.toBe(0);
      expect(err).toMatch(want);
    }
  }, 60_000);
});

function readTitle(dir: string, rel: string): string {
  return (readFileSync(join(dir, rel), 'utf8').split('\n')[0] ?? '').replace(/^# /, '');
}

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeJsonl } from '../helpers/build.js';
import { startHubServer, type HubServer } from '../helpers/hub-server.js';
import { connectStdio, runBinAsync, type ToolText } from '../helpers/mcp.js';
import { writeE5BaseStandIn } from '../helpers/slow-model.js';
import { BIN, HAS_SHARED, makeTempDir, sharedPath } from '../helpers/paths.js';

// Reliability III, items 9, 11 and 25: an index built online restarts on a compute node without
// network; a model that does not fit the index is refused before any download; a failed first run
// does not linger.
const tmp = makeTempDir();
/** A model of e5-base-v2's shape for the default model's repository (the tiny e5 is refused under that name). */
const standIn = (): string => writeE5BaseStandIn(join(tmp.dir, 'e5-base-stand-in'));
const indexDir = join(tmp.dir, 'indexes');
const cache = join(tmp.dir, 'cache');
let hub: HubServer;

beforeAll(async () => {
  if (!HAS_SHARED) return;
  // the tiny model under the default model's ONNX repository, which (like Xenova's) has no
  // sentence-transformers files: the hub answers 404 for each
  hub = await startHubServer({ repos: [{ repoType: 'model', repo: 'Xenova/e5-base-v2', dir: standIn() }] });
  const input = writeJsonl(tmp.dir, 'c.jsonl', [
    { id: '1', contents: '"Beta"\nbeta decay of nuclei' },
    { id: '2', contents: '"Alpha"\nalpha particles' },
  ]);
  const r = await runBinAsync(
    BIN.build,
    ['--name', 'c', '--input', input, '--format', 'wiki18', '--index-dir', indexDir, '--cache-dir', cache],
    { HF_ENDPOINT: hub.url },
  );
  expect(r.status, r.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  await hub?.close();
  tmp.cleanup();
});

async function denseSearch(env: NodeJS.ProcessEnv, extra: string[] = []): Promise<string> {
  const s = await connectStdio(['--corpus', 'c', '--index-dir', indexDir, '--cache-dir', cache, ...extra], env);
  try {
    const d = (await s.client.callTool({
      name: 'search',
      arguments: { query: 'beta decay', mode: 'dense', top_k: 1 },
    })) as ToolText;
    expect(d.isError, JSON.stringify(d)).toBeFalsy();
    return s.stderr();
  } finally {
    await s.close();
  }
}

describe.skipIf(!HAS_SHARED)('an index built online, served again', () => {
  it('asks the hub nothing: the manifest pins the commit whose files are cached', async () => {
    hub.requests.length = 0;
    await denseSearch({ HF_ENDPOINT: hub.url });
    expect(hub.requests).toEqual([]);
  });

  it("asks the hub nothing when the flags name the index's own model and variant (before: 7 HEADs)", async () => {
    hub.requests.length = 0;
    await denseSearch({ HF_ENDPOINT: hub.url }, ['--model', 'intfloat/e5-base-v2', '--model-variant', 'fp32']);
    expect(hub.requests).toEqual([]);
  });

  it('starts with no network and no --offline (before: died on an optional 404 file)', async () => {
    const stderr = await denseSearch({ HF_ENDPOINT: 'http://127.0.0.1:9' });
    expect(stderr).not.toMatch(/network error/);
  });

  it('honours HF_HUB_OFFLINE=1 for a model named on the command line', async () => {
    hub.requests.length = 0;
    await denseSearch({ HF_ENDPOINT: hub.url, HF_HUB_OFFLINE: '1' }, ['--model', 'intfloat/e5-base-v2']);
    expect(hub.requests).toEqual([]);
  });

  it('refuses another model before downloading anything', async () => {
    hub.requests.length = 0;
    const r = await runBinAsync(
      BIN.server,
      ['--corpus', 'c', '--index-dir', indexDir, '--cache-dir', cache, '--model', 'intfloat/e5-small-v2'],
      { HF_ENDPOINT: hub.url },
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /built with intfloat\/e5-base-v2 .* started with --model intfloat\/e5-small-v2; nothing was downloaded/,
    );
    expect(r.stderr).toMatch(/rebuild it with `.*--model intfloat\/e5-small-v2`/);
    expect(hub.requests).toEqual([]);
  });
});

describe.skipIf(!HAS_SHARED)('first runs that cannot download', () => {
  it('a failed download ends the process at once (before: ~50 s on the idle timer)', async () => {
    const dropping = await startHubServer({
      repos: [
        { repoType: 'model', repo: 'Xenova/e5-base-v2', dir: standIn() },
        {
          repoType: 'dataset',
          repo: 'yixuantt/MultiHopRAG',
          dir: sharedPath('data/multihop-rag'),
          files: { 'corpus.json': 'corpus.surrogate.json' },
        },
      ],
      dropGets: ['corpus.json'],
    });
    try {
      const t0 = Date.now();
      const r = await runBinAsync(
        BIN.build,
        ['--corpus', 'multihop', '--index-dir', join(tmp.dir, 'drop'), '--cache-dir', join(tmp.dir, 'drop-cache')],
        { HF_ENDPOINT: dropping.url },
      );
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/cannot download yixuantt\/MultiHopRAG\/corpus\.json/);
      // four attempts with their back-off take ~4 s; the idle timer of the last one kept it alive for 60 s
      expect(Date.now() - t0).toBeLessThan(25_000);
    } finally {
      await dropping.close();
    }
  }, 60_000);

  it('a first run over stdio that cannot build says so after its serving line, and why it stays up (issue 48, item 6)', async () => {
    const { spawn } = await import('node:child_process');
    const dir = join(tmp.dir, 'offline-first');
    const child = spawn(process.execPath, [
      BIN.server,
      '--corpus',
      'multihop',
      '--index-dir',
      join(dir, 'i'),
      '--cache-dir',
      join(dir, 'c'),
      '--offline',
    ]);
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', r));
    for (let i = 0; i < 300 && !/still serving over stdio/.test(err); i++) await new Promise((r) => setTimeout(r, 50));
    const lines = err.split('\n');
    const at = (re: RegExp): number => lines.findIndex((l) => re.test(l));
    expect(at(/serving multihop over stdio/), err).toBeGreaterThanOrEqual(0);
    expect(at(/first-run build failed: .*--offline/), err).toBeGreaterThan(at(/serving multihop over stdio/));
    expect(at(/still serving over stdio, but every search answers with this error/), err).toBeGreaterThan(
      at(/first-run build failed/),
    );
    child.stdin.end();
    expect(await exited).toBe(0);
  });

  it('names an HF_ENDPOINT without a scheme, without echoing a password', async () => {
    const r = await runBinAsync(BIN.build, ['--corpus', 'multihop', '--index-dir', join(tmp.dir, 'x')], {
      HF_ENDPOINT: 'me:hunter2@hf-mirror.example',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /HF_ENDPOINT is ".*hf-mirror\.example", which has no scheme: set it to a URL such as https:\/\//,
    );
    expect(r.stderr).not.toContain('hunter2');
  });
});

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { writeJsonl } from '../helpers/build.js';
import { runBinAsync } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir, sharedPath } from '../helpers/paths.js';

const tmp = makeTempDir();
afterAll(() => tmp.cleanup());

// A handle nobody closes (here: an interval preloaded into the process) must
// not keep a finished one-shot build alive, or a launcher script waits forever.
const LEAK = `--import=data:text/javascript,setInterval(()=>{},1000)`;

it('build-index exits once the build is done even if a handle is left open', async () => {
  const input = writeJsonl(tmp.dir, 'c.jsonl', [
    { id: 'a', contents: 'Alpha\nthe first letter' },
    { id: 'b', contents: 'Beta\nthe second letter' },
  ]);
  const started = Date.now();
  const r = await Promise.race([
    runBinAsync(
      BIN.build,
      ['--name', 'leak', '--input', input, '--format', 'jsonl', '--index-dir', tmp.dir, '--no-dense'],
      {
        NODE_OPTIONS: LEAK,
      },
    ),
    new Promise<{ status: string }>((resolve) => setTimeout(() => resolve({ status: 'still running' }), 30_000)),
  ]);
  expect(r.status).toBe(0);
  expect(existsSync(join(tmp.dir, 'leak', 'manifest.json'))).toBe(true);
  expect(Date.now() - started).toBeLessThan(30_000);
}, 40_000);

it('a failed build-index still exits with its error code', async () => {
  const r = await runBinAsync(
    BIN.build,
    ['--name', 'nope', '--input', join(tmp.dir, 'missing.jsonl'), '--format', 'jsonl', '--index-dir', tmp.dir],
    { NODE_OPTIONS: LEAK },
  );
  expect(r.status).toBe(2);
  expect(r.stderr).toMatch(/missing\.jsonl/);
}, 40_000);

it.skipIf(!HAS_SHARED)(
  'build-index refuses bad dense options before it reads anything',
  async () => {
    const input = writeJsonl(tmp.dir, 'p.jsonl', [{ id: 'a', contents: 'Alpha\nthe first letter' }]);
    const args = ['--name', 'pad', '--input', input, '--format', 'jsonl', '--index-dir', tmp.dir];
    const cases: Array<[string[], RegExp]> = [
      [['--batch-padding', '0.5'], /--batch-padding must be 0 \(no limit\) or a ratio of at least 1, got 0\.5/],
      [['--ann-checkpoint-minutes', '-5'], /--ann-checkpoint-minutes must be an integer from 0 to 10080, got -5/],
    ];
    for (const [flags, message] of cases) {
      const r = await runBinAsync(BIN.build, [...args, '--model-path', sharedPath('models/tiny-e5'), ...flags]);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(message);
      expect(existsSync(join(tmp.dir, 'pad', 'manifest.json'))).toBe(false);
    }
  },
  60_000,
);

/**
 * `GET /` in a real browser (Debian's Chromium driven by playwright-core,
 * installed by scripts/ensure-chromium.sh for the network tier): type a
 * query, see the fused hits with each arm's rank, open a hit's neighbours;
 * the token comes from the address and leaves it; the page asks nothing of
 * any other host.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeJsonl } from '../helpers/build.js';
import { TINY_MODEL, tinyBuildArgs } from '../helpers/encoder.js';
import { startHttpServer, type RunningServer } from '../helpers/http-server.js';
import { runBinAsync } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir } from '../helpers/paths.js';

const tmp = makeTempDir();
const TOKEN = 'page-test-token-0123456789';
const DOCS = [
  [
    'Volcanoes',
    'Volcanoes erupt molten rock called lava. Basaltic lava flows far. Ash clouds rise high above a volcano.',
  ],
  [
    'Glaciers',
    'Glaciers are rivers of ice. They carve valleys and leave moraines. Ice flows downhill under its weight.',
  ],
  ['Deserts', 'Deserts receive little rain. Dunes move with the wind. Cacti store water in their stems.'],
  ['Oceans', 'Oceans cover most of the planet. Tides follow the moon. Currents carry heat toward the poles.'],
];

function findChromium(): string | undefined {
  for (const b of ['chromium', 'chromium-browser']) {
    try {
      return execFileSync('sh', ['-c', `command -v ${b}`], { encoding: 'utf8' }).trim() || undefined;
    } catch {
      // next name
    }
  }
  return undefined;
}

const executable = findChromium();
// CI installs it (scripts/ensure-chromium.sh): there, a missing browser is a failure, not a skip
const run = HAS_SHARED && (executable !== undefined || process.env['CI'] !== undefined);
if (HAS_SHARED && !executable && !process.env['CI']) {
  process.stderr.write(
    '*** Chromium not found: the page test is SKIPPED (bash scripts/ensure-chromium.sh installs it) ***\n',
  );
}

/** The little of the DOM the test reads (this project's TypeScript has no DOM library). */
interface Row {
  querySelectorAll(selector: string): ArrayLike<{ textContent: string | null }>;
}

let server: RunningServer;
let browser: Browser;
beforeAll(async () => {
  if (!run) return;
  if (!executable) throw new Error('Chromium is not installed: run bash scripts/ensure-chromium.sh');
  const input = writeJsonl(
    tmp.dir,
    'c.jsonl',
    DOCS.map(([title, text], i) => ({ id: `d${i}`, title, text })),
  );
  const indexDir = join(tmp.dir, 'idx');
  const b = await runBinAsync(BIN.build, [
    ...tinyBuildArgs('geo', input, indexDir, 'jsonl'),
    '--chunk-size',
    '16',
    '--chunk-overlap',
    '0',
  ]);
  expect(b.status, b.stderr).toBe(0);
  // a second corpus of one long, dated passage: folding, dates, and searching every corpus
  const long = writeJsonl(tmp.dir, 'long.jsonl', [
    {
      id: 'fjords',
      title: 'Fjords',
      text: `${'Fjords are long narrow inlets carved by glaciers into the coast. '.repeat(12)}The last sentence holds the word sealochs.`,
      metadata: { published_at: '2021-06-15T08:30:00Z' },
    },
  ]);
  const l = await runBinAsync(BIN.build, tinyBuildArgs('long', long, indexDir, 'jsonl'));
  expect(l.status, l.stderr).toBe(0);
  server = await startHttpServer(
    ['--corpus', 'geo', '--corpus', 'long', '--index-dir', indexDir, '--model-path', TINY_MODEL],
    { RETRIEVER_MCP_TOKEN: TOKEN },
  );
  browser = await chromium.launch({ executablePath: executable, args: ['--no-sandbox', '--disable-gpu'] });
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  tmp.cleanup();
});

describe.skipIf(!run)('the page at GET /', () => {
  it('asks for the token the address carries, and nothing else', async () => {
    expect((await fetch(`${server.url}/`)).status).toBe(401);
    const wrong = await fetch(`${server.url}/?token=nope`);
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toMatch(/open \/\?token=<token> in the browser/);
  });

  it('shows the fused hits with both ranks, the text the agent reads, and a hit\u2019s neighbours', async () => {
    const page = await browser.newPage();
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}/?token=${TOKEN}`);
    await page.getByText('Ready.').waitFor({ timeout: 30_000 });
    // the token left the address bar (and so the history)
    expect(new URL(page.url()).search).toBe('');

    await page.fill('#q', 'lava from a volcano');
    await page.selectOption('#mode', 'hybrid');
    await page.click('#go');
    await page.locator('#hits tbody tr').first().waitFor({ timeout: 30_000 });
    await expect.poll(() => page.locator('#status').textContent()).toMatch(/hits from geo \(hybrid\)/);
    const rows = await page
      .locator('#hits tbody tr')
      .evaluateAll((trs) =>
        (trs as unknown as Row[]).map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent ?? '')),
      );
    expect(rows.length).toBeGreaterThan(1);
    const [first] = rows as string[][];
    expect(first?.[0]).toBe('1');
    expect(first?.[6]).toContain('Volcanoes');
    // both arms ranked the top hit: its BM25 rank and dense rank are numbers, side by side
    expect(first?.[2]).toMatch(/^\d+$/);
    expect(first?.[4]).toMatch(/^\d+$/);
    expect(Number(first?.[3])).toBeGreaterThan(0);
    // what the agent reads: the same text block the search tool returns
    await page.locator('#hits tbody tr').first().locator('summary').click();
    await expect
      .poll(() => page.locator('#hits tbody tr').first().locator('details').textContent())
      .toMatch(/Doc 1 \[id d0#\d+\] \(Title: Volcanoes\)/);

    await page.locator('#hits tbody tr').first().getByText('read the neighbours').click();
    const hood = page.locator('#hits tbody tr').first().locator('.hood > div');
    await expect.poll(() => hood.count(), { timeout: 30_000 }).toBeGreaterThan(1);
    expect(await page.locator('#hits tbody tr').first().locator('.hood .cur').count()).toBe(1);

    expect(errors).toEqual([]);
    const origin = new URL(server.url).origin;
    expect(requests.filter((u) => !u.startsWith(origin))).toEqual([]);
    await page.close();
  });

  it('runs the search its address names, keeps the address on each search, folds long passages, shows dates as days', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // a linked search: the query, mode, corpus and hits in the address
    await page.goto(`${server.url}/?token=${TOKEN}&q=glaciers+carve&mode=bm25&corpus=*&k=3`);
    await expect
      .poll(() => page.locator('#status').textContent(), { timeout: 30_000 })
      .toMatch(/^3 hits from every corpus \(bm25\)/);
    expect(await page.inputValue('#q')).toBe('glaciers carve');
    // the token left the address; the search stayed in it, so the result can be linked
    const linked = new URL(page.url());
    expect(linked.searchParams.get('token')).toBeNull();
    expect(Object.fromEntries(linked.searchParams)).toEqual({ q: 'glaciers carve', mode: 'bm25', corpus: '*', k: '3' });

    const fjords = page.locator('#hits tbody tr', { hasText: 'Fjords' }).first();
    await fjords.waitFor({ timeout: 30_000 });
    // the long passage shows its start and a "more"; its last sentence only after the click
    const text = fjords.locator('td').last().locator('.text').first();
    expect(await text.textContent()).not.toContain('sealochs');
    await text.getByText('more').click();
    await expect.poll(() => text.textContent()).toContain('sealochs');
    // its date as a day, and the corpus it came from
    expect(await fjords.locator('.meta').first().textContent()).toMatch(/in long · 2021-06-15$/);

    // a new search from the form rewrites the address
    await page.fill('#q', 'tides moon');
    await page.selectOption('#corpus', 'geo');
    await page.click('#go');
    await expect.poll(() => page.locator('#status').textContent()).toMatch(/hits from geo \(bm25\)/);
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({
      q: 'tides moon',
      mode: 'bm25',
      corpus: 'geo',
      k: '3',
    });
    expect(errors).toEqual([]);
    await page.close();
  });
});

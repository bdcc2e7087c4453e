import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TINY_MODEL } from '../helpers/encoder.js';
import { runBin } from '../helpers/mcp.js';
import { BIN, HAS_SHARED, makeTempDir, sharedPath } from '../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

describe.skipIf(!HAS_SHARED)('eval on 2WikiMultiHopQA (FlashRAG format)', () => {
  it('reports supporting-id recall and answer recall per question type, and writes JSON', () => {
    const indexDir = join(tmp.dir, 'idx');
    const b = runBin(BIN.build, [
      '--name',
      '2wiki',
      '--input',
      sharedPath('data/2wiki-200/corpus.jsonl'),
      '--format',
      'wiki18',
      '--index-dir',
      indexDir,
      '--no-dense',
    ]);
    expect(b.status, b.stderr).toBe(0);
    const json = join(tmp.dir, 'eval.json');
    const r = runBin(BIN.server, [
      'eval',
      '--corpus',
      '2wiki',
      '--index-dir',
      indexDir,
      '--queries',
      sharedPath('data/2wiki-200/queries.jsonl'),
      '--format',
      'flashrag',
      '--json',
      json,
      '--no-progress',
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\| bm25 \| all +\| 200 /);
    expect(r.stdout).toMatch(/\| bm25 \| compositional/);
    const out = JSON.parse(readFileSync(json, 'utf8')) as {
      rows: Array<{ type: string; metrics: Record<string, number> }>;
    };
    const all = out.rows.find((x) => x.type === 'all')?.metrics ?? {};
    // the same numbers the MCP acceptance test measures through batch_search
    expect(all['R@10']).toBeCloseTo(0.7675, 4);
    expect(all['MRR@10']).toBeCloseTo(0.9503, 3);
    expect(all['answer@5']).toBeGreaterThan(0.3);
  });

  it('--html writes one self-contained report: curves per mode, and where hybrid lost, with both lists', () => {
    const indexDir = join(tmp.dir, 'idx-dense');
    const b = runBin(BIN.build, [
      ...['--name', '2wiki', '--input', sharedPath('data/2wiki-200/corpus.jsonl'), '--format', 'wiki18'],
      ...['--index-dir', indexDir, '--model-path', TINY_MODEL, '--no-progress'],
    ]);
    expect(b.status, b.stderr).toBe(0);
    const html = join(tmp.dir, 'report.html');
    const r = runBin(BIN.server, [
      ...['eval', '--corpus', '2wiki', '--index-dir', indexDir, '--model-path', TINY_MODEL],
      ...['--queries', sharedPath('data/2wiki-200/queries.jsonl'), '--format', 'flashrag', '--limit', '60'],
      ...['--html', html, '--no-progress'],
    ]);
    expect(r.status, r.stderr).toBe(0);
    // the table on stdout keeps the --k cut-offs it always had
    expect(r.stdout).toMatch(/\| hybrid \| all +\| 60 /);
    expect(r.stdout).not.toMatch(/R@2 /);
    const page = readFileSync(html, 'utf8');
    // self-contained: no script, no stylesheet or image from anywhere
    expect(page).not.toMatch(/<script|<link|src=|url\(/i);
    // a curve per metric family, a line per mode
    for (const family of ['R@k', 'nDCG@k', 'answer@k']) expect(page).toContain(`<figcaption>${family}</figcaption>`);
    expect(page.match(/<polyline/g)?.length).toBe(9);
    // the tiny random model ranks badly, so hybrid loses to BM25 on some questions: each is shown with both lists
    const lost = /(\d+) of (\d+) judged queries rank worse in hybrid than in an arm by nDCG@10/.exec(page);
    expect(lost, page.slice(0, 2000)).not.toBeNull();
    expect(Number(lost?.[1])).toBeGreaterThan(0);
    const first = page.split('<div class="loss">')[1] ?? '';
    expect(first).toMatch(/<b>hybrid<\/b>.*<b>(bm25|dense)<\/b>/s);
    expect(first).toContain('class="rel"');
    // the summary fits a laptop: a few depths a metric (the curves carry every one), not 37 columns
    const summary = page.split('<h2>Summary</h2>')[1]?.split('</thead>')[0] ?? '';
    expect(summary.match(/<th>/g)?.length).toBeLessThanOrEqual(14);
    expect(summary).toContain('<th>R@5</th>');
    expect(summary).not.toContain('<th>R@8</th>');

    // questions with no answer strings: no answer@k anywhere, rather than columns of 0.0000
    const lines = readFileSync(sharedPath('data/2wiki-200/queries.jsonl'), 'utf8').trim().split('\n');
    const bare = join(tmp.dir, 'no-answers.jsonl');
    writeFileSync(
      bare,
      lines.map((l) => JSON.stringify({ ...(JSON.parse(l) as object), golden_answers: [] })).join('\n') + '\n',
    );
    const html2 = join(tmp.dir, 'report-2.html');
    const r2 = runBin(BIN.server, [
      ...['eval', '--corpus', '2wiki', '--index-dir', indexDir, '--model-path', TINY_MODEL],
      ...['--queries', bare, '--format', 'flashrag', '--limit', '60', '--html', html2, '--no-progress'],
    ]);
    expect(r2.status, r2.stderr).toBe(0);
    expect(r2.stdout).toMatch(/R@5/);
    expect(r2.stdout).not.toMatch(/answer@/);
    expect(readFileSync(html2, 'utf8')).not.toMatch(/answer@/);
  });
});

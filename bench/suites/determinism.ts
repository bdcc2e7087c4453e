/**
 * Same query, same index, same list: three fresh server processes answer the
 * same 300 real questions (hybrid, top-10, with scores) and the responses are
 * compared byte for byte.
 *
 *   npm run bench -- determinism
 */
import { createHash } from 'node:crypto';
import { printTable, writeResult } from '../lib/common.js';
import { loadRealQuestions } from '../lib/queries.js';
import { ensureLoadIndex, loadServerArgs } from '../lib/load-index.js';
import { startServer } from '../lib/server.js';

const queries = loadRealQuestions().slice(0, 300);
const hashes: string[] = [];
ensureLoadIndex();
for (let run = 1; run <= 3; run++) {
  const srv = await startServer(loadServerArgs());
  const h = createHash('sha256');
  for (let i = 0; i < queries.length; i += 30) {
    const r = await fetch(`${srv.url}/retrieve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ queries: queries.slice(i, i + 30), topk: 10, return_scores: true, mode: 'hybrid' }),
    });
    h.update(await r.text());
  }
  hashes.push(h.digest('hex'));
  await srv.stop();
}
const rows = hashes.map((h, i) => ({ run: i + 1, queries: queries.length, 'sha256 of responses': h.slice(0, 16) }));
printTable(`Fused results across 3 fresh processes: ${new Set(hashes).size === 1 ? 'identical' : 'DIFFERENT'}`, rows);
writeResult('determinism', { identical: new Set(hashes).size === 1, hashes });

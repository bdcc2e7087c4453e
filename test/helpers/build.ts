import { cpSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildIndex, type BuildOptions, type BuildSummary } from '../../src/build/build-index.js';
import { DEFAULTS } from '../../src/config.js';
import { silentLogger } from '../../src/util/log.js';

/** Writes records as a jsonl file and returns its path. */
export function writeJsonl(dir: string, name: string, records: unknown[]): string {
  const path = join(dir, name);
  writeFileSync(path, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return path;
}

export function buildOptions(
  over: Partial<BuildOptions> & Pick<BuildOptions, 'name' | 'input' | 'format' | 'indexDir'>,
): BuildOptions {
  return {
    chunkSize: 0,
    chunkOverlap: 0,
    bm25: DEFAULTS.bm25,
    maxPostingsInMemory: DEFAULTS.maxPostingsInMemory,
    threads: 0,
    dense: null,
    resume: false,
    rebuildCommand: `build-index --name ${over.name} --input ${over.input} --format ${over.format}`,
    log: silentLogger,
    progress: false,
    ...over,
  };
}

export function build(over: Parameters<typeof buildOptions>[0]): Promise<BuildSummary> {
  return buildIndex(buildOptions(over));
}

/** A copy of built index `name` (its files, not the symlink) into a fresh index directory, to damage. */
export function copyIndex(fromIndexDir: string, name: string, toIndexDir: string): { indexDir: string; dir: string } {
  cpSync(realpathSync(join(fromIndexDir, name)), join(toIndexDir, name), { recursive: true });
  return { indexDir: toIndexDir, dir: join(toIndexDir, name) };
}

/** `retriever-mcp build` arguments for a BM25-only index of `input` (tinyBuildArgs is the dense twin). */
export function bm25BuildArgs(name: string, input: string, indexDir: string, format = 'wiki18'): string[] {
  return ['--name', name, '--input', input, '--format', format, '--index-dir', indexDir, '--no-dense'];
}

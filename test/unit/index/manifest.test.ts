import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readManifest } from '../../../src/index/manifest.js';
import { INDEX_FORMAT_VERSION } from '../../../src/version.js';
import { makeTempDir } from '../../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

function withFormat(version: number): string {
  const dir = join(tmp.dir, `f${version}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({ format_version: version, tool_version: '0.0.1', build_id: 'b', files: {} }),
  );
  return dir;
}

describe('readManifest', () => {
  it('opens the format it builds and format 1 (whose store schema 1 the reader still answers)', () => {
    expect(INDEX_FORMAT_VERSION).toBe(2);
    expect(readManifest(withFormat(2), 'rebuild').format_version).toBe(2);
    expect(readManifest(withFormat(1), 'rebuild').format_version).toBe(1);
    expect(readManifest(withFormat(3), 'rebuild').format_version).toBe(3);
  });

  it('refuses any other format, naming the ones it reads and the fix', () => {
    for (const v of [0, 4]) {
      expect(() => readManifest(withFormat(v), 'run build-index again')).toThrow(
        new RegExp(
          `index format ${v} \\(built by retriever-mcp 0\\.0\\.1\\) but this server reads formats 1, 2, 3 \\(it builds 2, 3 with an IVF index\\): run build-index again`,
        ),
      );
    }
  });
});

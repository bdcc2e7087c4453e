import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fsyncFiles, syncInBackground, writeFileAtomic } from '../../../src/util/fs-durable.js';
import { makeTempDir } from '../../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

/** Descriptors this process holds open on `path` (Linux's /proc/self/fd). */
function descriptorsOn(path: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false; // closed since the listing
    }
  }).length;
}

describe('durable file helpers', () => {
  it('sync a file in the background, keeping its descriptor open until finish', async () => {
    const path = join(tmp.dir, 'bg.bin');
    writeFileSync(path, Buffer.alloc(1 << 20, 1));
    const sync = syncInBackground(path);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // still open: closing it would drop the POSIX locks SQLite may hold on the file
    expect(descriptorsOn(path)).toBe(1);
    await sync.finish();
    expect(descriptorsOn(path)).toBe(0);
  });

  it('report a file that cannot be synced at finish, not as an unhandled rejection', async () => {
    const sync = syncInBackground(join(tmp.dir, 'missing.bin'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(sync.finish()).rejects.toThrow(/ENOENT.*missing\.bin/);
    await expect(fsyncFiles([join(tmp.dir, 'missing.bin')])).rejects.toThrow(/missing\.bin/);
  });

  it('write a small file atomically', () => {
    const path = join(tmp.dir, 'state.json');
    writeFileAtomic(path, '{"a":1}');
    writeFileAtomic(path, '{"a":2}');
    expect(readFileSync(path, 'utf8')).toBe('{"a":2}');
    expect(readdirSync(tmp.dir).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });
});

import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BLOCK_BYTES,
  fingerprintFile,
  fingerprintFiles,
  verifyFiles,
  verifyFilesInBackground,
} from '../../../src/index/file-integrity.js';
import { makeTempDir } from '../../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

// 70 MiB: past the size where fingerprintFiles takes a second thread, and two blocks
const bigBytes = Buffer.alloc(BLOCK_BYTES + 6 * 2 ** 20);
for (let i = 0; i < bigBytes.length; i += 4096) bigBytes.writeUInt32LE((i * 2654435761) >>> 0, i);
const big = join(tmp.dir, 'big.bin');
writeFileSync(big, bigBytes);
const small = join(tmp.dir, 'small.bin');
writeFileSync(small, 'hello');
const empty = join(tmp.dir, 'empty.bin');
writeFileSync(empty, '');

describe('index file fingerprints', () => {
  it('hash whole files and each 64 MiB block, on two threads as on one', async () => {
    const got = await fingerprintFiles([big, small, empty]);
    expect(got[0]).toEqual({
      bytes: bigBytes.length,
      sha256: sha(bigBytes),
      blocks: [sha(bigBytes.subarray(0, BLOCK_BYTES)).slice(0, 16), sha(bigBytes.subarray(BLOCK_BYTES)).slice(0, 16)],
    });
    expect(got[1]).toEqual({
      bytes: 5,
      sha256: sha(Buffer.from('hello')),
      blocks: [sha(Buffer.from('hello')).slice(0, 16)],
    });
    expect(got[2]).toEqual({ bytes: 0, sha256: sha(Buffer.alloc(0)), blocks: [sha(Buffer.alloc(0)).slice(0, 16)] });
    expect(got).toEqual([big, small, empty].map((p) => fingerprintFile(p)));
    // small files alone stay on this thread, with the same answer
    expect(await fingerprintFiles([small])).toEqual([got[1]]);
  });

  it('name a file that cannot be read', async () => {
    await expect(fingerprintFiles([big, join(tmp.dir, 'missing.bin')])).rejects.toThrow(/missing\.bin/);
  });

  it('name a file that cannot be hashed past the size check, on both threads', async () => {
    // a directory passes stat but not read: both threads fail, and neither failure goes unhandled
    await expect(fingerprintFiles([big, tmp.dir])).rejects.toThrow(/EISDIR/);
  });

  it('find a damaged block', async () => {
    const [rec] = await fingerprintFiles([big]);
    const files = { 'big.bin': rec as NonNullable<typeof rec> };
    expect(() => verifyFiles(tmp.dir, files, 'full', 'rebuild it')).not.toThrow();
    const fd = openSync(big, 'r+');
    writeSync(fd, Buffer.from([0xff]), 0, 1, BLOCK_BYTES + 12_345);
    closeSync(fd);
    expect(() => verifyFiles(tmp.dir, files, 'full', 'rebuild it')).toThrow(
      /big\.bin does not match its checksum in manifest\.json \(64 MiB block 1\).*rebuild it/,
    );
  });

  it('check the rest on a worker thread: a middle block the ends check cannot see', async () => {
    // three blocks: the first and last are checked before serving, the middle one only in the background
    const three = join(tmp.dir, 'three.bin');
    const bytes = Buffer.alloc(2 * BLOCK_BYTES + 2 ** 20);
    for (let i = 0; i < bytes.length; i += 4096) bytes.writeUInt32LE((i * 40503) >>> 0, i);
    writeFileSync(three, bytes);
    const files = { 'three.bin': fingerprintFile(three) };
    await expect(verifyFilesInBackground(tmp.dir, files, 'rebuild it').done).resolves.toBeUndefined();
    const fd = openSync(three, 'r+');
    writeSync(fd, Buffer.from([0xff]), 0, 1, BLOCK_BYTES + 777);
    closeSync(fd);
    expect(() => verifyFiles(tmp.dir, files, 'sample', 'rebuild it', 0)).not.toThrow();
    const check = verifyFilesInBackground(tmp.dir, files, 'rebuild it');
    await expect(check.done).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringMatching(
        /three\.bin does not match its checksum in manifest\.json \(64 MiB block 1\).*rebuild it/,
      ),
    });
    // stopped early (a corpus closing), it neither settles nor keeps a thread
    const stopped = verifyFilesInBackground(tmp.dir, files, 'rebuild it');
    await stopped.stop();
    const outcome = await Promise.race([
      stopped.done.then(
        () => 'settled',
        () => 'settled',
      ),
      new Promise((r) => setTimeout(() => r('pending'), 300)),
    ]);
    expect(outcome).toBe('pending');
  });

  it('hash the files opened with the corpus, never a rebuild swapped in meanwhile', async () => {
    // Reliability III, item 14: a rebuild published during the pass replaced the files under the
    // served name, and the pass judged the new build's files by the old manifest ("damaged")
    const dir = join(tmp.dir, 'swap');
    mkdirSync(dir);
    const path = join(dir, 'three.bin');
    const bytes = Buffer.alloc(2 * BLOCK_BYTES + 2 ** 20);
    for (let i = 0; i < bytes.length; i += 4096) bytes.writeUInt32LE((i * 7919) >>> 0, i);
    writeFileSync(path, bytes);
    const files = { 'three.bin': fingerprintFile(path) };
    const check = verifyFilesInBackground(dir, files, 'rebuild it');
    // the new build's file, renamed over the old name (as the symlink swap and removal of the old build do)
    bytes.writeUInt32LE(0xdeadbeef, BLOCK_BYTES + 64);
    writeFileSync(`${path}.new`, bytes);
    renameSync(`${path}.new`, path);
    await expect(check.done).resolves.toBeUndefined();
    // the same pass started after the swap does see the other file
    await expect(verifyFilesInBackground(dir, files, 'rebuild it').done).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
    });
  });
});

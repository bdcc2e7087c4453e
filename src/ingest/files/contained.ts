import { closeSync, constants, fstatSync, openSync, readlinkSync, realpathSync, statSync } from 'node:fs';

/**
 * What a folder build opens is inside the folder, checked on what was opened: a name checked a
 * moment before can lead elsewhere by then (a subfolder swapped for a symlink to an outside
 * directory while a 50,000-file build walked was followed, and the outside file indexed;
 * O_NOFOLLOW guards only a path's last component). On Linux the kernel names the file an open
 * descriptor refers to (/proc/self/fd); elsewhere the path is resolved again after the open and
 * must still name the very file opened (same device and inode).
 */

/** The folder's real path, as bytes (names need not be UTF-8), with a trailing `/`. */
export function realRoot(root: string): Buffer {
  const real = realpathSync(root, { encoding: 'buffer' });
  return real[real.length - 1] === 0x2f ? real : Buffer.concat([real, Buffer.from('/')]);
}

const PROC_FD = (() => {
  try {
    return statSync('/proc/self/fd').isDirectory();
  } catch {
    return false;
  }
})();

/** Whether the file open as `fd` (opened through `path`) lies under `root` (realRoot's). */
export function openedInside(fd: number, path: Buffer | string, root: Buffer): boolean {
  let real: Buffer;
  try {
    if (PROC_FD) real = readlinkSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' });
    else {
      real = realpathSync(path, { encoding: 'buffer' });
      const [a, b] = [fstatSync(fd), statSync(real)];
      if (a.dev !== b.dev || a.ino !== b.ino) return false;
    }
  } catch {
    return false;
  }
  return real.length > root.length && real.subarray(0, root.length).equals(root);
}

/** A directory to list, opened without following a final symlink and checked to be inside `root`. */
export function openDirInside(path: Buffer, root: Buffer): number | Error {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    return err as Error;
  }
  // the folder itself is its own root; anything below must be strictly inside it
  const self = Buffer.concat([path, Buffer.from('/')]);
  if (self.equals(root) || openedInside(fd, path, root)) return fd;
  closeSync(fd);
  return new Error('it now leads outside the folder (swapped for a link while the build ran?)');
}

/** A path that lists the directory open as `fd` itself, not whatever its name leads to now. */
export function listingPath(fd: number, path: Buffer): Buffer | string {
  return PROC_FD ? `/proc/self/fd/${fd}` : path;
}

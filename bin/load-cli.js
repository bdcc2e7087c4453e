// Loads the compiled command-line program, or explains how to build it.
export async function loadCli(name, prog = 'retriever-mcp') {
  fixMmapThreshold();
  try {
    return await import(`../dist/src/cli/${name}.js`);
  } catch (err) {
    if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes(`dist/src/cli/${name}.js`)) {
      process.stderr.write(`${prog}: error: the package is not built; run \`npm run build\` (or \`npm ci\`) first\n`);
      process.exit(1);
    }
    throw err;
  }
}

/** glibc's default, fixed: large blocks always mmap'd, so a free gives them back. */
export const MMAP_THRESHOLD = '131072';

/**
 * glibc's malloc raises its mmap threshold each time it frees a large block, so opening a model
 * (hundreds of tensor-sized blocks parsed, copied and freed) leaves 55-75 MiB of holes in its heaps
 * that are never returned to the system (e5-small-v2: 373-391 MiB resident at ready, 314-317 with
 * the threshold fixed). glibc reads MALLOC_MMAP_THRESHOLD_ only when a process starts, so the
 * process starts itself again in its own place (same pid and stdio, nothing read yet) with it set:
 * Node 22.15 and later (`process.execve`), on Linux. A value the user set is kept; elsewhere, or
 * where exec is refused, the process goes on as it is.
 */
export function fixMmapThreshold() {
  if (process.platform !== 'linux' || typeof process.execve !== 'function') return;
  if (process.env.MALLOC_MMAP_THRESHOLD_ !== undefined) return;
  // a parent's IPC channel (child_process.fork) does not survive the exec: the parent saw a
  // disconnect at once; and a preload (--require, --import) would run again in the new image
  if (process.env.NODE_CHANNEL_FD !== undefined || process.channel) return;
  if (hasPreload([...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)])) return;
  try {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
      ...process.env,
      MALLOC_MMAP_THRESHOLD_: MMAP_THRESHOLD,
    });
  } catch {
    // a sandbox that forbids exec: run with the default allocator
  }
}

/** Whether Node's flags load code before the program (run once per image, so twice across an exec). */
function hasPreload(flags) {
  return flags.some((f) => /^(?:--require|-r|--import|--loader|--experimental-loader)(?:=|$)/.test(f));
}

import { readFileSync } from 'node:fs';

/**
 * What tells a process from an earlier one that had the same PID: the
 * kernel's boot id and the process's start time in clock ticks since boot
 * (field 22 of /proc/PID/stat). A server that is PID 1 in a container gets
 * PID 1 again after a restart, so a PID alone cannot say whether a lock's
 * holder still runs. Both are undefined where /proc is not (macOS).
 */
export function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

export function processStartTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) is in parentheses and may hold spaces: count fields after its ")"
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[19]; // field 22 overall: rest starts at field 3
  } catch {
    return undefined;
  }
}

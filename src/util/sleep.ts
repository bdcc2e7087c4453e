import { setTimeout as delay } from 'node:timers/promises';

/**
 * Waits `ms`, or rejects with the signal's own reason as soon as it aborts
 * (timers/promises rejects with a generic AbortError, which would lose the
 * reason a stopped build reports: what was kept and how to resume).
 */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, signal ? { signal } : {});
  } catch (err) {
    signal?.throwIfAborted();
    throw err;
  }
}

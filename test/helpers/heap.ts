import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// a full collection on demand, without starting the test runner with --expose-gc
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** A full garbage collection now: heapUsed after it is what is still alive. */
export const collectGarbage = (): void => gc();

/** Bytes the JS heap holds after `run` beyond what it held before, both measured after a full collection. */
export function heapGrowth(run: () => void): number {
  gc();
  const before = process.memoryUsage().heapUsed;
  run();
  gc();
  return process.memoryUsage().heapUsed - before;
}

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;

/**
 * A full garbage collection now. After a model loads, the thread that read
 * and rewrote its file holds a few hundred megabytes of dead buffers (the
 * file, its fused rewrite) that an idle thread would keep until some later
 * allocation made V8 collect: resident memory at ready counted them.
 * `--expose-gc` set at run time exposes `gc` to a new context only.
 */
export function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}

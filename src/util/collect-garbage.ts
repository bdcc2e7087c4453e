import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Gc = (options?: {
  type?: 'major' | 'minor';
  execution?: 'sync' | 'async';
  flavor?: 'regular' | 'last-resort';
}) => void;
let gc: Gc | undefined;

/**
 * Every collection V8 can make now, and its young generation shrunk to what
 * it holds. Loading leaves garbage an idle process keeps until some later
 * allocation makes V8 collect: after a model loads, the thread that read and
 * rewrote its file holds a few hundred megabytes of dead buffers (the file,
 * its fused rewrite); and a start-up's parsing grows the young generation's
 * semi-spaces (on Node 24 up to 64 MiB each), pages that stay resident while
 * empty. The last-resort flavour (Node 22 and later) gives those pages back:
 * e5-small-v2 served over HTTP on Node 24 holds 30-35 MiB less at ready. They
 * grow again under load, as far as V8's own limit. Node 20 gets a plain full
 * collection: given options, its V8 collects nothing. `--expose-gc` set at
 * run time exposes `gc` to a new context only.
 */
export function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as Gc;
  }
  // Node 20's V8 takes the options but then frees nothing: there, the plain collection
  if (LAST_RESORT) gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  else gc();
}

/** Whether this V8 makes a last-resort collection on request (Node 22 and later). */
const LAST_RESORT = Number(process.versions.node.split('.')[0]) >= 22;

import { statSync } from 'node:fs';
import type { AnnBuilder } from './ann.js';
import { readGraphLinks } from './graph-file.js';
import type { Logger } from '../../util/log.js';
import { formatBytes, formatCount, formatDuration } from '../../util/progress.js';

/**
 * Re-inserting a node links it to its new neighbours, which can prune another
 * node's last in-link; a round finds the orphans that leaves. One round
 * cleared every orphan of the 100k, 1M and 2M graphs measured in
 * docs/lab-notes/2026-11-24-hnsw-orphans.md.
 */
export const RELINK_ROUNDS = 3;
/** Keys named in a warning about nodes left unreachable. */
const NAMED = 10;
/**
 * A graph this large is announced before it is read: wiki-18's 20 GB takes
 * tens of seconds a scan, after the graph's progress bar has finished.
 */
const ANNOUNCE_BYTES = 1 << 30;

export interface RelinkReport {
  /** Nodes re-inserted, over all rounds (a node may count twice). */
  relinked: number;
  /** Orphans in the graph as last saved. */
  left: number[];
}

/**
 * Makes every node of a saved graph reachable again. USearch's threaded
 * insertion now and then leaves a node that no base-level link points to; no
 * search returns it, whatever the efSearch (the 2026-11 design notes (git show 97ad262:docs/lab-notes/2026-11-design-notes.md), “HNSW relinking”). Each
 * round scans the file at `path` (`readGraphLinks`, a sequential read: 0.2 s
 * at 100k, against 19–22 s to search every node for itself; 0.4–0.7 s for
 * the 1–2 GB graphs of 1M–2M vectors), re-inserts the orphans and saves the
 * graph again.
 */
export function relinkOrphans(
  builder: AnnBuilder,
  path: string,
  rowOf: (num: number) => Float32Array,
  log: Logger,
): RelinkReport {
  const started = performance.now();
  const took = (): string => formatDuration((performance.now() - started) / 1000);
  const bytes = statSync(path).size;
  if (bytes >= ANNOUNCE_BYTES) log.info(`HNSW graph: checking ${formatBytes(bytes)} for nodes no link reaches…`);
  let relinked = 0;
  for (let round = 1; ; round++) {
    const { nodes, orphans } = readGraphLinks(path);
    if (orphans.length === 0) {
      const what = relinked === 0 ? 'no link missing' : `${formatCount(relinked)} relinked`;
      log.info(`HNSW graph: all ${formatCount(nodes)} nodes reachable (${what}; checked in ${took()})`);
      return { relinked, left: [] };
    }
    if (round > RELINK_ROUNDS) {
      const named = orphans.slice(0, NAMED).join(', ') + (orphans.length > NAMED ? ', …' : '');
      log.warn(
        `${formatCount(orphans.length)} HNSW node(s) still unreachable after ${RELINK_ROUNDS} rounds of relinking ` +
          `(chunks ${named}): dense search cannot return them, BM25 still can`,
      );
      return { relinked, left: orphans };
    }
    log.info(`HNSW graph: relinking ${formatCount(orphans.length)} node(s) no link reached (round ${round})`);
    builder.reinsert(orphans, rowOf);
    builder.save(path);
    relinked += orphans.length;
  }
}

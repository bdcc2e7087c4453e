import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AnnBuilder, type AnnParams } from './ann.js';
import type { VectorDtype } from './vectors-file.js';
import { INDEX_FILES } from '../layout.js';
import { fsyncPath, writeFileAtomic } from '../../util/fs-durable.js';
import type { Logger } from '../../util/log.js';
import { formatCount } from '../../util/progress.js';

/** What a graph depends on besides its rows: a graph saved under other values is another graph. */
export interface CheckpointKey {
  dim: number;
  connectivity: number;
  expansionAdd: number;
  quantization: AnnParams['quantization'];
  vectorsDtype: VectorDtype;
}

const GRAPH = `${INDEX_FILES.ann}.checkpoint`;
const KEY = `${GRAPH}.json`;

/**
 * HNSW checkpoints. wiki-18's 21M-vector graph takes hours on a few cores,
 * and a graph held only in memory is lost with the process; so a long build
 * saves it into the partial build directory every few minutes, and --resume
 * continues from the last save instead of from the first row.
 * The graph goes to a temp file that is fsynced and renamed, so a crash while
 * saving leaves the previous checkpoint. The key file is (re)written, with
 * the same contents, before each graph; the number of rows is the graph's
 * own (`AnnBuilder.resume` checks they are chunks 0 … n−1).
 * Disk: while a checkpoint is written the old and the new graph both exist.
 */
export class AnnCheckpoint {
  private readonly graphPath: string;
  private readonly keyPath: string;

  constructor(
    private readonly dir: string,
    private readonly key: CheckpointKey,
  ) {
    this.graphPath = join(dir, GRAPH);
    this.keyPath = join(dir, KEY);
  }

  /** The graph of an interrupted build with the same key; else undefined, and stale files are removed. */
  load(params: AnnParams, log: Logger): AnnBuilder | undefined {
    if (!existsSync(this.graphPath)) return undefined;
    const saved = this.readKey();
    const same =
      saved !== undefined &&
      (Object.keys(this.key) as Array<keyof CheckpointKey>).every((k) => saved[k] === this.key[k]);
    const got = same
      ? AnnBuilder.resume(this.graphPath, this.key.dim, params)
      : { reason: `it was made with other graph settings (${JSON.stringify(saved ?? null)})` };
    if ('reason' in got) {
      log.warn(`HNSW checkpoint not used: ${got.reason}; the graph is built from the start`);
      this.remove();
      return undefined;
    }
    log.info(`resume: the HNSW graph continues from its checkpoint of ${formatCount(got.builder.size)} vectors`);
    return got.builder;
  }

  /** Saves the graph as the new checkpoint; returns the seconds it took. */
  save(builder: AnnBuilder): number {
    const t = performance.now();
    writeFileAtomic(this.keyPath, JSON.stringify(this.key));
    const tmp = `${this.graphPath}.tmp`;
    builder.save(tmp);
    fsyncPath(tmp);
    renameSync(tmp, this.graphPath);
    return (performance.now() - t) / 1000;
  }

  remove(): void {
    AnnCheckpoint.removeFrom(this.dir);
  }

  /** Removes any checkpoint from a build directory (a resumed build that no longer makes a graph). */
  static removeFrom(dir: string): void {
    for (const name of [GRAPH, `${GRAPH}.tmp`, KEY]) rmSync(join(dir, name), { force: true });
  }

  private readKey(): CheckpointKey | undefined {
    try {
      return JSON.parse(readFileSync(this.keyPath, 'utf8')) as CheckpointKey;
    } catch {
      return undefined;
    }
  }
}

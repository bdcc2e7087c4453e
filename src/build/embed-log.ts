import { closeSync, existsSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';

/** Where a build's embedding log lives in its partial directory. */
export const EMBED_LOG = 'vectors.done';
const WINDOW_DONE = 0xffffffff;
const REC = 12;

/**
 * What an interrupted build's embedding got done, batch by batch: an append-only file of u32
 * triples (window start, batch number in that window's plan, its rows; the batch 0xffffffff marks
 * a window whose every row is written). A batch is logged after its rows are written, so a logged batch
 * is whole; a torn last record is ignored. A stop loses at most the batch in flight (a second or
 * two), where a window of 4,096 passages was minutes.
 */
export class EmbedLog {
  private readonly windows = new Set<number>();
  private readonly batches = new Map<number, Map<number, number>>();
  private fd: number | undefined;

  constructor(readonly path: string) {
    if (existsSync(path)) {
      const b = readFileSync(path);
      for (let at = 0; at + REC <= b.length; at += REC) {
        const start = b.readUInt32LE(at);
        const batch = b.readUInt32LE(at + 4);
        if (batch === WINDOW_DONE) this.windows.add(start);
        else {
          let m = this.batches.get(start);
          if (!m) this.batches.set(start, (m = new Map()));
          m.set(batch, b.readUInt32LE(at + 8));
        }
      }
      // a done window's rows are counted with it
      for (const w of this.windows) this.batches.delete(w);
    }
    this.fd = openSync(path, 'a');
  }

  windowDone(start: number): boolean {
    return this.windows.has(start);
  }

  /** The batches of a window's plan already written. */
  batchesDone(start: number): ReadonlySet<number> {
    return new Set(this.batches.get(start)?.keys() ?? []);
  }

  /** Batches logged in windows not yet done, and their rows (what "N of M kept" adds to whole windows). */
  get batchesLogged(): number {
    let n = 0;
    for (const m of this.batches.values()) n += m.size;
    return n;
  }

  get rowsInBatches(): number {
    let n = 0;
    for (const m of this.batches.values()) for (const rows of m.values()) n += rows;
    return n;
  }

  markBatch(start: number, batch: number, rows: number): void {
    this.append(start, batch, rows);
  }

  markWindow(start: number): void {
    this.append(start, WINDOW_DONE, 0);
    this.windows.add(start);
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }

  /** The log removed: the vectors are all written and the index is about to be published. */
  remove(): void {
    this.close();
    rmSync(this.path, { force: true });
  }

  private append(a: number, b: number, c: number): void {
    if (this.fd === undefined) throw new Error(`${this.path} is closed`);
    const rec = Buffer.alloc(REC);
    rec.writeUInt32LE(a, 0);
    rec.writeUInt32LE(b, 4);
    rec.writeUInt32LE(c, 8);
    writeSync(this.fd, rec);
  }
}

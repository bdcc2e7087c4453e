import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Cuts every base-level link to one node out of a saved USearch 2.x graph
 * file, making an orphan on purpose (threaded builds make them only now and
 * then). Walks the layout on its own, written from USearch's
 * index_dense.hpp / index.hpp rather than from src/index/dense/graph-file.ts,
 * so a wrong offset in either shows up as a disagreement. Picks the first
 * node, by slot, with level 0 that is not the entry point; returns its key.
 */
export function orphanFirstBaseNode(path: string): number {
  const buf = readFileSync(path);
  const graphAt = 8 + buf.readUInt32LE(0) * buf.readUInt32LE(4) + 64;
  const u64 = (i: number): number => Number(buf.readBigUInt64LE(graphAt + 8 * i));
  const [n, m, m0, , entry] = [u64(0), u64(1), u64(2), u64(3), u64(4)];
  const levelAt = graphAt + 40;
  const nodeAt: number[] = [];
  let at = levelAt + 2 * n;
  for (let slot = 0; slot < n; slot++) {
    nodeAt.push(at);
    at += 8 + 2 + (4 + 4 * m0) + buf.readInt16LE(levelAt + 2 * slot) * (4 + 4 * m);
  }
  if (at !== buf.length) throw new Error(`walked to byte ${at} of ${buf.length}: the layout is misread`);
  let target = -1;
  for (let slot = 0; slot < n && target < 0; slot++)
    if (slot !== entry && buf.readInt16LE(levelAt + 2 * slot) === 0) target = slot;
  if (target < 0) throw new Error('no base-level node to orphan');
  for (const start of nodeAt) {
    const countAt = start + 10;
    const links: number[] = [];
    for (let j = 0; j < buf.readUInt32LE(countAt); j++) links.push(buf.readUInt32LE(countAt + 4 + 4 * j));
    const kept = links.filter((s) => s !== target);
    buf.writeUInt32LE(kept.length, countAt);
    kept.forEach((s, j) => buf.writeUInt32LE(s, countAt + 4 + 4 * j));
  }
  writeFileSync(path, buf);
  return Number(buf.readBigUInt64LE(nodeAt[target] as number));
}

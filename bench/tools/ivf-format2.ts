/**
 * Rewrites a format-1 `dense.ivf` in format 2 from its index's own `vectors.bin`: format 2 is
 * format 1 plus each vector's <r, c> (its residual from its list's mean, along that mean), which
 * a build computes as it encodes (src/index/dense/ivf-encode.ts). The codes, factors, lists and
 * means are kept; <r, c> is computed the way the build does, in one pass over the vectors in
 * order (no random reads). So the 21M index built in format 1 (48 min) is measured in format 2
 * without a second build, which this disk has no room for (the vectors twice: 60 GB).
 *
 *   node dist/bench/tools/ivf-format2.js INDEX_DIR
 *
 * Keeps the old file as dense.ivf.v1 and updates the manifest's record of dense.ivf.
 */
import { closeSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fingerprintFile } from '../../src/index/file-integrity.js';
import { encodeHeader, layout, listOffsets, readIvfHead } from '../../src/index/dense/ivf-format.js';
import { halvesToFloats } from '../../src/util/half.js';
import { preadFully, writeAllAt } from '../../src/util/pread.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: ivf-format2 INDEX_DIR');
const manifestPath = join(dir, 'manifest.json');
const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
  dense: { encoder: { dim: number }; vectors: { count: number; dtype: string } };
  files: Record<string, unknown>;
};
const dim = manifest.dense.encoder.dim;
const count = manifest.dense.vectors.count;
if (manifest.dense.vectors.dtype !== 'f16') throw new Error('this tool reads f16 vectors');
const path = join(dir, 'dense.ivf');
const old = readIvfHead(path, { dim, count }, 'rebuild');
const h = old.head;
if (h.version !== 1) throw new Error(`${path} is version ${h.version}, not 1`);
if (h.dimPadded !== dim) throw new Error('padded dimensions are not handled here');
const log = (s: string): void => void process.stderr.write(`${s}\n`);
const fd = openSync(path, 'r');
const codeRow = h.dimPadded / 8;

// each vector's list, from the lists' chunk nums
const listOf = new Uint32Array(count);
const t0 = performance.now();
for (let l = 0; l < h.lists; l++) {
  const n = old.sizes[l] as number;
  if (n === 0) continue;
  const idsAt = (old.offsets[l] as number) + Math.ceil(n / 16) * codeRow * 16 + n * 4;
  const ids = new Uint32Array(n);
  preadFully(fd, new Uint8Array(ids.buffer), n * 4, idsAt);
  for (const id of ids) listOf[id] = l;
}
log(`lists read: ${((performance.now() - t0) / 1000).toFixed(1)} s`);

// <r, c> of every vector, in one pass over vectors.bin
const along = new Float32Array(count);
const vfd = openSync(join(dir, 'vectors.bin'), 'r');
const step = 65536;
const raw = new Uint16Array(step * dim);
const rows = new Float32Array(step * dim);
const fine = old.centroids;
for (let from = 0; from < count; from += step) {
  const m = Math.min(step, count - from);
  preadFully(vfd, new Uint8Array(raw.buffer, 0, m * dim * 2), m * dim * 2, from * dim * 2);
  halvesToFloats(raw.subarray(0, m * dim), rows);
  for (let i = 0; i < m; i++) {
    const c = (listOf[from + i] as number) * dim;
    let rc = 0;
    for (let d = 0; d < dim; d++) {
      const mean = fine[c + d] as number;
      rc += ((rows[i * dim + d] as number) - mean) * mean;
    }
    along[from + i] = rc;
  }
  if ((from / step) % 32 === 0)
    log(`<r, c>: ${from + m} of ${count} (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
}
closeSync(vfd);

// the new file: the same sections, each list's payload with its <r, c> column after the chunk nums
const h2 = layout(h.dim, h.rounds, h.coarse, old.sizes, 2);
const o2 = listOffsets(h2, old.sizes);
const tmp = `${path}.v2-tmp`;
const out = openSync(tmp, 'w');
writeAllAt(out, encodeHeader(h2), 0);
const copy = (from: number, to: number, bytes: number): void => {
  const b = Buffer.alloc(bytes);
  preadFully(fd, b, bytes, from);
  writeAllAt(out, b, to);
};
copy(h.centroidsAt, h2.centroidsAt, h.lists * dim * 4);
copy(h.coarseAt, h2.coarseAt, h.coarse * dim * 4);
copy(h.childrenAt, h2.childrenAt, (h.coarse + 1) * 4);
copy(h.signsAt, h2.signsAt, h.rounds * dim * 4);
copy(h.sizesAt, h2.sizesAt, h.lists * 4);
writeAllAt(out, Buffer.from(o2.buffer), h2.offsetsAt);
for (let l = 0; l < h.lists; l++) {
  const n = old.sizes[l] as number;
  if (n === 0) continue;
  const keep = Math.ceil(n / 16) * codeRow * 16 + n * 8;
  const b = Buffer.alloc((o2[l + 1] as number) - (o2[l] as number));
  preadFully(fd, b, keep, old.offsets[l] as number);
  const ids = new Uint32Array(b.buffer, b.byteOffset + keep - n * 4, n);
  const rc = new Float32Array(b.buffer, b.byteOffset + keep, n);
  for (let i = 0; i < n; i++) rc[i] = along[ids[i] as number] as number;
  writeAllAt(out, b, o2[l] as number);
}
closeSync(out);
closeSync(fd);
renameSync(path, `${path}.v1`);
renameSync(tmp, path);
manifest.files['dense.ivf'] = fingerprintFile(path);
writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
log(`done: ${path} is format 2 (${h2.fileBytes} bytes), ${((performance.now() - t0) / 1000).toFixed(0)} s`);

/**
 * The layers of src/, lowest first. A module may import its own layer's
 * folder and any lower layer, never a higher one, and never a sibling of its
 * own layer (index/ and encoder/ know nothing of each other). DESIGN.md
 * "Layout" explains each layer; `npm run check` runs this.
 */
const LAYERS = [
  ['core', 'util', 'text', 'errors.ts', 'version.ts'],
  ['store', 'hub'],
  ['ingest', 'index', 'encoder'],
  ['search', 'build', 'presets'],
  ['eval', 'server', 'engine'],
  ['config.ts'],
  ['app'],
  ['cli'],
];

const path = (part) => `^src/${part.replace(/\./g, '\\.')}${part.endsWith('.ts') ? '$' : '/'}`;
const forbidden = [];
LAYERS.forEach((layer, rank) => {
  const above = LAYERS.slice(rank + 1).flat();
  for (const part of layer) {
    const siblings = layer.filter((p) => p !== part);
    if (above.length > 0) {
      forbidden.push({
        name: `no-upward-${part}`,
        comment: `${part} is below ${above.join(', ')}: it may not import them`,
        severity: 'error',
        from: { path: path(part) },
        to: { path: above.map(path) },
      });
    }
    if (siblings.length > 0) {
      forbidden.push({
        name: `no-sideways-${part}`,
        comment: `${part} and ${siblings.join(', ')} share a layer: they may not import each other`,
        severity: 'error',
        from: { path: path(part) },
        to: { path: siblings.map(path) },
      });
    }
  }
});

/** Each native module, the search engine's client and the folder watcher have exactly one importer, behind an interface of ours. */
const NATIVE = {
  'better-sqlite3': 'src/store/sqlite.ts',
  'better-sqlite3-napi': 'src/store/sqlite.ts',
  'onnxruntime-node': 'src/encoder/onnx-session.ts',
  usearch: 'src/index/dense/ann.ts',
  '@opensearch-project/opensearch': 'src/engine/opensearch/client.ts',
  chokidar: 'src/ingest/files/watch-folder.ts',
};
for (const [mod, owner] of Object.entries(NATIVE)) {
  forbidden.push({
    name: `one-importer-${mod}`,
    comment: `${mod} is wrapped by ${owner} alone`,
    severity: 'error',
    from: { path: '^src/', pathNot: `^${owner.replace(/\./g, '\\.')}$` },
    to: { path: `node_modules/${mod}/` },
  });
}
forbidden.push({
  name: 'no-circular',
  severity: 'error',
  comment: 'cycles make a layer order meaningless',
  from: {},
  to: { circular: true },
});

module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^src/index/bm25/wasm/' },
  },
};

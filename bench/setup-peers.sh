#!/usr/bin/env bash
# Makes the benchmark's native peer loadable: `roaring` (CRoaring for Node).
# Its npm install script downloads a prebuilt binary (github.com, unreachable here)
# and falls back to compiling with node-gyp. Offline, node-gyp must be pointed at
# the machine's own Node headers (nodedir), or it tries to download them and fails.
# An install with --ignore-scripts skips the build entirely. Idempotent; safe in CI.
set -euo pipefail
cd "$(dirname "$0")/.."

if node -e "require('roaring')" 2>/dev/null; then
  echo "setup-peers: roaring loads, nothing to do"
  exit 0
fi

# The headers of the running node: <prefix>/include/node/node.h (Debian: /usr).
prefix="$(node -p "require('path').resolve(process.execPath, '..', '..')")"
if [ -z "${npm_config_nodedir:-}" ] && [ -f "$prefix/include/node/node.h" ]; then
  export npm_config_nodedir="$prefix"
fi
echo "setup-peers: building roaring from source (nodedir=${npm_config_nodedir:-node-gyp default}) ..."
npm rebuild roaring --foreground-scripts --ignore-scripts=false
node -e "const { RoaringBitmap32 } = require('roaring'); if (new RoaringBitmap32([1, 2, 3]).size !== 3) process.exit(1)"
echo "setup-peers: roaring loads"

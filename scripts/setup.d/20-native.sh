#!/usr/bin/env bash
# The N-API addon (node-gyp), incrementally: npm ci built it once; this picks up source changes since.
# Offline: node-gyp uses the local Node headers (--nodedir), so it never downloads anything.
set -euo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
source scripts/lib/node.sh

nodedir="$(node_headers_dir)"
jobs="$(nproc 2>/dev/null || echo 2)"
if [ -f build/Makefile ] && [ -f build/config.gypi ]; then
  # Regenerate the makefiles (new sources are globbed at configure time) and rebuild what changed.
  npx --no-install node-gyp configure --nodedir="$nodedir" --loglevel=warn
  npx --no-install node-gyp build --nodedir="$nodedir" --jobs="$jobs" --loglevel=warn
else
  npx --no-install node-gyp rebuild --nodedir="$nodedir" --jobs="$jobs" --loglevel=warn
fi
node -e "require('./build/Release/sightflow.node')" && echo "native addon built: build/Release/sightflow.node"

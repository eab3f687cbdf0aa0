#!/usr/bin/env bash
# The N-API addon (node-gyp), incrementally: npm ci built it once; this picks up source changes since. Two
# builds of it: sightflow.node, and sightflow_novideo.node without FFmpeg (for hosts without its libraries).
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
# The second build, without FFmpeg (binding.gyp): it must load, say so, and need none of FFmpeg's libraries.
node -e "if (require('./build/Release/sightflow_novideo.node').features.video !== false) process.exit(1)"
if ldd build/Release/sightflow_novideo.node | grep -E 'lib(av|sw)[a-z]*\.so'; then
  echo "build/Release/sightflow_novideo.node links FFmpeg" >&2
  exit 1
fi
echo "native addon built: build/Release/sightflow_novideo.node (no video)"

#!/usr/bin/env bash
# Native core: Debian build tools + FFmpeg dev libraries + doctest, then the N-API addon with node-gyp.
# Offline: node-gyp uses the headers Debian's nodejs ships in /usr/include/node (--nodedir=/usr), so it
# never downloads anything. Idempotent: packages already installed are skipped, the build is incremental.
set -euo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"

source scripts/lib/apt.sh
apt_install build-essential pkg-config libavformat-dev libavcodec-dev libswscale-dev libavutil-dev ffmpeg doctest-dev cmake

# node_modules must exist for node-addon-api and node-gyp (an earlier part runs npm ci on a clean clone).
[ -d node_modules/node-addon-api ] || flock /tmp/npm.lock npm ci --no-audit --no-fund

nodedir=/usr
[ -f "$nodedir/include/node/node_api.h" ] || nodedir="$(dirname "$(dirname "$(command -v node)")")"
jobs="$(nproc 2>/dev/null || echo 2)"
if [ -f build/Makefile ] && [ -f build/config.gypi ]; then
  # Incremental: regenerate the makefiles (new sources are globbed at configure time) and rebuild.
  npx --no-install node-gyp configure --nodedir="$nodedir" --loglevel=warn
  npx --no-install node-gyp build --nodedir="$nodedir" --jobs="$jobs" --loglevel=warn
else
  npx --no-install node-gyp rebuild --nodedir="$nodedir" --jobs="$jobs" --loglevel=warn
fi
node -e "require('./build/Release/sightflow.node')" && echo "native addon built: build/Release/sightflow.node"

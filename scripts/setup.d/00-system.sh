#!/usr/bin/env bash
# Node.js check and every system package, first: the npm install that follows already builds the native
# addon, so compilers, python3 and the FFmpeg headers must be there before it. The packages are the groups of
# scripts/system-packages.txt that this setup needs (serve, plus test for `./quickstart test`).
set -euo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
source scripts/lib/apt.sh

if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' 2>/dev/null; then
  echo "sightflow needs Node.js >= 20 (found: $(node --version 2>/dev/null || echo none))" >&2
  exit 1
fi
groups=(serve)
[ "${SIGHTFLOW_SETUP:-test}" = test ] && groups+=(test)
apt_install_groups "${groups[@]}"
echo "system packages: ${groups[*]} ok"

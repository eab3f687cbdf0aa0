#!/usr/bin/env bash
# The TypeScript build (dist/), last, after the addon and models exist.
set -euo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
npx --no-install tsc -p tsconfig.json
echo "built dist/"

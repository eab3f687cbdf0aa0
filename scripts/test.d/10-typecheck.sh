#!/usr/bin/env bash
# Type-checks everything, tests, benches and evals included (the build compiles src/ only), then the console
# (browser code under its own settings; Vite bundles it without checking types). Unused locals and imports are
# errors in both.
set -euo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
npx --no-install tsc -p tsconfig.check.json
npx --no-install tsc -p console/tsconfig.json
echo "typecheck: ok"

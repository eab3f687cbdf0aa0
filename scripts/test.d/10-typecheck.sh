#!/usr/bin/env bash
# Type-checks everything, tests, benches and evals included (the build compiles src/ only).
set -euo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
npx --no-install tsc -p tsconfig.check.json
echo "typecheck: ok"

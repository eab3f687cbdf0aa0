#!/usr/bin/env bash
# The formatter's check: every TypeScript file as Biome writes it (biome.json; CONTRIBUTING.md, "Style").
# Fails on an unformatted file and names it; `npx biome format --write .` fixes the tree.
set -euo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
if npx --no-install biome format --reporter=summary . ; then
  echo "format: ok"
else
  echo "format: files above are not formatted (run: npx biome format --write .)"
  exit 1
fi

#!/usr/bin/env bash
# Runs the whole suite: native tests, the TypeScript test files (against PGlite and a throwaway
# PostgreSQL cluster), then every benchmark and evaluation in --quick mode so none can rot.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
for part in scripts/test.d/*.sh; do
  [ -e "$part" ] || continue
  echo "== test: ${part##*/}"
  bash "$part" || status=1
done
exit $status

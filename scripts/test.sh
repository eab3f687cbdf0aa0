#!/usr/bin/env bash
# Runs the whole suite: every scripts/test.d part in order (native ctest, the TypeScript tests on PGlite and
# on a throwaway PostgreSQL cluster, every bench and eval in --quick mode), then one summary line.
set -uo pipefail
cd "$(dirname "$0")/.."
export SIGHTFLOW_ROOT="$PWD"
mkdir -p .tmp && rm -f .tmp/*.tap
status=0
failed_parts=()
for part in scripts/test.d/*.sh; do
  [ -e "$part" ] || continue
  echo "== test: ${part##*/}"
  if ! bash "$part"; then status=1; failed_parts+=("${part##*/}"); fi
done
pass=$(cat .tmp/*.tap 2>/dev/null | grep -E '^# pass [0-9]+' | awk '{s+=$3} END {print s+0}')
fail=$(cat .tmp/*.tap 2>/dev/null | grep -E '^# fail [0-9]+' | awk '{s+=$3} END {print s+0}')
if [ "$status" -ne 0 ]; then
  echo "failed parts: ${failed_parts[*]}"
  grep -h -A 30 '^not ok' .tmp/*.tap 2>/dev/null | head -200
fi
echo "tests: ${pass} passed, ${fail} failed"
exit $status

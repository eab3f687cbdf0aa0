#!/usr/bin/env bash
# Every benchmark and evaluation in --quick mode, so none can rot. Each must exit 0 and end with one JSON line.
set -uo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
status=0
pass=0
fail=0
for kind in bench eval; do
  dir=bench/suites; [ "$kind" = eval ] && dir=eval/tasks
  for f in "$dir"/*.ts; do
    name=$(basename "$f" .ts)
    args=(--quick --json)
    [ "$kind/$name" = eval/track ] && args+=(--detections gt)
    echo "-- npm run $kind -- $name ${args[*]}"
    out=$(timeout 600 npm run --silent "$kind" -- "$name" "${args[@]}" 2>&1)
    rc=$?
    last=$(printf '%s\n' "$out" | grep -v '^npm warn' | tail -n 1)
    if [ $rc -eq 0 ] && node -e 'JSON.parse(process.argv[1])' "$last" 2>/dev/null; then
      printf '%s\n' "$out" | grep -v '^npm warn' | tail -n 3
      pass=$((pass + 1))
    else
      printf '%s\n' "$out" | tail -n 30
      echo "FAILED: $kind $name (exit $rc)"
      status=1; fail=$((fail + 1))
    fi
  done
done
# Counted with the tests in the summary line.
printf '# pass %d\n# fail %d\n' "$pass" "$fail" > .tmp/bench-eval.tap
exit $status

#!/usr/bin/env bash
# Every benchmark and evaluation in --quick mode, so none can rot. Each must exit 0 and end with one JSON line;
# one that finds no evaluation data ends with {"skipped": true, "reason": ...} and counts as skipped.
set -uo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
source scripts/lib/tap.sh
source scripts/lib/test-tree.sh
ensure_test_tree || exit 1
mkdir -p .tmp
suites=()
for kind in bench eval; do
  dir=bench/suites; [ "$kind" = eval ] && dir=eval/tasks
  for f in "$dir"/*.ts; do
    suites+=("$kind/$(basename "$f" .ts)")
  done
done
# The longest quick runs in CI's logs first (several times most of the others), so that the last to
# start are short and the part does not wait on one long run at its end; the rest in name order.
longest=(bench/failover bench/live bench/mqtt bench/vision bench/http bench/fanout bench/vectors bench/serve eval/retrieval)
ordered=()
for s in "${longest[@]}"; do [[ " ${suites[*]} " == *" $s "* ]] && ordered+=("$s"); done
for s in "${suites[@]}"; do [[ " ${longest[*]} " == *" $s "* ]] || ordered+=("$s"); done
# Counted with the tests in the summary line.
run_suites .tmp/bench-eval.tap "${ordered[@]}"

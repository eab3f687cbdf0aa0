#!/usr/bin/env bash
# Runs the whole suite: every scripts/test.d part in order (native ctest, the TypeScript tests on PGlite and
# on a throwaway PostgreSQL cluster, every bench and eval in --quick mode, the same readers of the evaluation
# data again without it), then the summary: passed, failed, skipped, and a line per skip reason.
# A clone without the evaluation data passes with those skipped; CI has the data, so there such a skip fails.
set -uo pipefail
cd "$(dirname "$0")/.."
export SIGHTFLOW_ROOT="$PWD"
source scripts/lib/tap.sh
started=$(date +%s)
mkdir -p .tmp && rm -f .tmp/*.tap
status=0
failed_parts=()
for part in scripts/test.d/*.sh; do
  [ -e "$part" ] || continue
  echo "== test: ${part##*/}"
  if ! bash "$part"; then status=1; failed_parts+=("${part##*/}"); fi
done
if [ "$status" -ne 0 ]; then
  echo "failed parts: ${failed_parts[*]}"
  grep -h -A 30 '^not ok' .tmp/*.tap 2>/dev/null | head -200
fi
echo "suite: ran in $(( $(date +%s) - started )) s"
tap_summary .tmp/*.tap
if [ "${CI:-}" = true ]; then
  reason=$(eval_data_reason)
  if [ -z "$reason" ]; then
    echo "CI: FAILED: cannot read EVAL_DATA_MISSING from eval/dir.ts, so skips for missing evaluation data cannot be told apart"
    status=1
  else
    n=$(tap_skipped_for "$reason" .tmp/*.tap)
    if [ "$n" -gt 0 ]; then
      echo "CI: FAILED: $n skipped with \"$reason\"; CI has the evaluation data and must run every test, bench and" \
        "evaluation (is ../shared/eval there, or SIGHTFLOW_EVAL_DIR set?)"
      status=1
    fi
  fi
  byo_reason=$(byo_models_reason)
  if [ -z "$byo_reason" ]; then
    echo "CI: FAILED: cannot read BYO_MODELS_MISSING from eval/byo-dir.ts, so skips for missing model exports cannot be told apart"
    status=1
  else
    n=$(tap_skipped_for "$byo_reason" .tmp/*.tap)
    if [ "$n" -gt 0 ]; then
      echo "CI: FAILED: $n skipped with \"$byo_reason\"; CI has the model exports and must run every test that reads them" \
        "(is ../shared/byo-models there, or SIGHTFLOW_BYO_MODELS_DIR set?)"
      status=1
    fi
  fi
fi
exit $status

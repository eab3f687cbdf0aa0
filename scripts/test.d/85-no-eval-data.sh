#!/usr/bin/env bash
# A clone without the evaluation data and the bring-your-own model exports must pass, their readers skipped and
# the reasons said. Rather than the whole suite a second time, this runs exactly the readers (test files,
# benches, evaluations: found by their imports of eval/dir.ts or eval/byo-dir.ts, scripts/eval-data-users.ts)
# with SIGHTFLOW_EVAL_DIR and SIGHTFLOW_BYO_MODELS_DIR set to a fresh empty folder, counts them with the main
# run's code, and asserts: all exit 0, none failed, some skipped, each reason's line printed.
# Its own skips are expected, so they stay out of the main summary: it counts there as one passed or failed test.
set -uo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
source scripts/lib/tap.sh
source scripts/lib/test-tree.sh
source scripts/lib/node-tests.sh
ensure_test_tree || exit 1
mkdir -p .tmp
result=.tmp/no-eval-data.tap
work=$(mktemp -d)
empty=$(mktemp -d)
trap 'rm -rf "$work" "$empty"' EXIT
problems=()

reason=$(eval_data_reason)
[ -n "$reason" ] || problems+=("cannot read EVAL_DATA_MISSING from eval/dir.ts")
byo_reason=$(byo_models_reason)
[ -n "$byo_reason" ] || problems+=("cannot read BYO_MODELS_MISSING from eval/byo-dir.ts")
tests=()
suites=()
if users=$(node --import tsx scripts/eval-data-users.ts); then
  while read -r kind what; do
    case "$kind" in
      test) tests+=("$what") ;;
      # bench live's one-camera runs read no evaluation data and ran in the main quick run; only its cameras-
      # per-machine entry reads it, so that entry alone runs here (its own skip, rather than the cameras again).
      bench)
        if [ "$what" = live ]; then suites+=("bench/live --streams 2 --source-fps 5"); else suites+=("bench/$what"); fi ;;
      eval) suites+=("eval/$what") ;;
    esac
  done <<< "$users"
  echo "readers of the evaluation data: ${#tests[@]} test files, ${#suites[@]} benches and evaluations; running them with an empty SIGHTFLOW_EVAL_DIR"
else
  problems+=("scripts/eval-data-users.ts failed (see above)")
fi

if [ ${#tests[@]} -gt 0 ]; then
  SIGHTFLOW_EVAL_DIR="$empty" SIGHTFLOW_BYO_MODELS_DIR="$empty" SIGHTFLOW_TEST_DB=pglite SIGHTFLOW_TEST_DIST=1 \
    run_node_tests "$work/tests.tap" 2 $(compiled "${tests[@]}") > /dev/null || problems+=("the test files exited non-zero")
fi
if [ ${#suites[@]} -gt 0 ]; then
  SIGHTFLOW_EVAL_DIR="$empty" SIGHTFLOW_BYO_MODELS_DIR="$empty" run_suites "$work/suites.tap" "${suites[@]}" > "$work/suites.log" 2>&1 ||
    problems+=("a bench or evaluation failed: $(grep '^FAILED: ' "$work/suites.log" | tr '\n' ' ')")
fi

summary=$(tap_summary "$work"/*.tap)
echo "$summary" | sed 's/^/  /'
[ "$(tap_total fail "$work"/*.tap)" -eq 0 ] || problems+=("failures without the evaluation data")
[ "$(tap_total skipped "$work"/*.tap)" -gt 0 ] || problems+=("nothing was skipped")
n=$(tap_skipped_for "$reason" "$work"/*.tap)
if [ "$n" -eq 0 ] || ! grep -qxF "skipped $n: $reason" <<< "$summary"; then problems+=("no \"skipped N: $reason\" line"); fi
# Readers of the exports alone (not of the evaluation data) skip for the exports' reason.
nb=$(tap_skipped_for "$byo_reason" "$work"/*.tap)
if [ "$nb" -gt 0 ] && ! grep -qxF "skipped $nb: $byo_reason" <<< "$summary"; then problems+=("no \"skipped N: $byo_reason\" line"); fi

name='without evaluation data and model exports: their readers exit 0, none fail, the skips are counted and their reasons printed'
if [ ${#problems[@]} -eq 0 ]; then
  echo "no evaluation data: ok"
  printf 'ok 1 - %s\n1..1\n# pass 1\n# fail 0\n' "$name" > "$result"
  exit 0
fi
printf 'no evaluation data: FAILED: %s\n' "${problems[@]}"
grep -h -A 30 '^\s*not ok' "$work"/*.tap 2>/dev/null | head -120
{
  echo "not ok 1 - $name"
  printf '  # %s\n' "${problems[@]}"
  grep -h -A 30 '^\s*not ok' "$work"/*.tap 2>/dev/null | head -120 | sed 's/^/  # /'
  printf '1..1\n# pass 0\n# fail 1\n'
} > "$result"
exit 1

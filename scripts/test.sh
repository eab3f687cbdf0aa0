#!/usr/bin/env bash
# Runs the whole suite: every scripts/test.d part in order (native ctest, the TypeScript tests on PGlite and
# on a throwaway PostgreSQL cluster, every bench and eval in --quick mode, the same readers of the evaluation
# data again without it), then the summary: passed, failed, skipped, and a line per skip reason.
# A clone without the evaluation data passes with those skipped; CI has the data, so there such a skip fails.
set -uo pipefail
cd "$(dirname "$0")/.."
export SIGHTFLOW_ROOT="$PWD"
# Every test app, CLI run and bench makes its fresh embedded database from one template (docs/configuration.md).
export SIGHTFLOW_PGLITE_TEMPLATE_DIR="${SIGHTFLOW_PGLITE_TEMPLATE_DIR:-$PWD/.tmp/pglite-templates}"
# Temporary files (every test's data dir, fresh embedded databases, the throwaway PostgreSQL cluster) go to
# a directory of this run in memory when /dev/shm has room: a fresh PGlite database is about a thousand files
# written and removed again, and on a disk mounted with `discard` that made a test app's start 3.1-3.8 s
# against 1.3-2.4 s in memory. Removed when the suite ends; SIGHTFLOW_TEST_TMPDIR chooses another parent.
tmp_parent="${SIGHTFLOW_TEST_TMPDIR:-}"
if [ -z "$tmp_parent" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR==2 {print $4}')" -gt $((6 * 1024 * 1024)) ]; then
  tmp_parent=/dev/shm
fi
if [ -n "$tmp_parent" ]; then
  TMPDIR="$(mktemp -d "$tmp_parent/sightflow-suite.XXXXXX")"
  # As /tmp: the throwaway PostgreSQL cluster runs as the postgres user and makes its directory here.
  chmod 1777 "$TMPDIR"
  export TMPDIR
  trap 'rm -rf "$TMPDIR"' EXIT
fi
source scripts/lib/tap.sh
source scripts/lib/test-tree.sh
started=$(date +%s)
# Built anew once for every part below (each part run on its own builds its own).
unset SIGHTFLOW_TEST_TREE
ensure_test_tree || exit 1
mkdir -p .tmp && rm -f .tmp/*.tap
status=0
failed_parts=()
for part in scripts/test.d/*.sh; do
  [ -e "$part" ] || continue
  echo "== test: ${part##*/}"
  part_started=$SECONDS
  if ! bash "$part"; then status=1; failed_parts+=("${part##*/}"); fi
  # Where the suite's time goes, part by part, in every log (CI's budget is the whole).
  echo "== test: ${part##*/} took $((SECONDS - part_started)) s"
done
if [ "$status" -ne 0 ]; then
  echo "failed parts: ${failed_parts[*]}"
  grep -h -A 30 '^not ok' .tmp/*.tap 2>/dev/null | head -200
fi
echo "suite: ran in $(( $(date +%s) - started )) s"
tap_summary .tmp/*.tap
# require_no_skips NAME REASON WHAT: CI has every input, so a skip for its absence fails the run.
require_no_skips() {
  local name=$1 reason=$2 what=$3 n
  if [ -z "$reason" ]; then
    echo "CI: FAILED: cannot read $name, so skips for missing $what cannot be told apart"
    status=1
    return
  fi
  n=$(tap_skipped_for "$reason" .tmp/*.tap)
  if [ "$n" -gt 0 ]; then
    echo "CI: FAILED: $n skipped with \"$reason\"; CI has the $what and must run every test, bench and evaluation that reads them"
    status=1
  fi
}
if [ "${CI:-}" = true ]; then
  require_no_skips "EVAL_DATA_MISSING from eval/dir.ts" "$(eval_data_reason)" \
    "evaluation data (is ../shared/eval there, or SIGHTFLOW_EVAL_DIR set?)"
  require_no_skips "BYO_MODELS_MISSING from eval/byo-dir.ts" "$(byo_models_reason)" \
    "model exports (is ../shared/byo-models there, or SIGHTFLOW_BYO_MODELS_DIR set?)"
fi
exit $status

#!/usr/bin/env bash
# The TypeScript suite twice: on PGlite, then the integration tests on a throwaway PostgreSQL cluster
# the harness starts (and always stops).
set -uo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
source scripts/lib/test-tree.sh
ensure_test_tree || exit 1
files=$(find test -name '*.test.ts' -not -path '*/e2e/*' | sort)
integration=$(find test/integration -name '*.test.ts' | sort)
status=0
export SIGHTFLOW_TEST_DB=pglite
# CLI tests run the built dist/ (setup built it), as the README's commands do.
export SIGHTFLOW_TEST_DIST=1
echo "== node tests (PGlite)"
node --enable-source-maps --test --test-concurrency=2 $(compiled $files) 2>&1 | tee .tmp/test-pglite.tap | grep -E '^(not ok|# (tests|pass|fail|skipped))' ; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "== integration tests (PostgreSQL)"
eval "$(node --import tsx test/helpers/pg-cluster.ts start)"
trap 'node --import tsx test/helpers/pg-cluster.ts stop' EXIT
SIGHTFLOW_TEST_DB=postgres node --enable-source-maps --test --test-concurrency=2 $(compiled $integration) 2>&1 | tee .tmp/test-postgres.tap | grep -E '^(not ok|# (tests|pass|fail|skipped))' ; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
exit $status

#!/usr/bin/env bash
# The TypeScript suite twice: on PGlite, then the tests that run on both databases (`*.both-db.test.ts`, beside
# the other tests of their part) again on a throwaway PostgreSQL cluster the harness starts (and always stops).
set -uo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
source scripts/lib/test-tree.sh
source scripts/lib/node-tests.sh
ensure_test_tree || exit 1
files=$(find test -name '*.test.ts' -not -path '*/e2e/*' | sort)
both_db=$(find test -name '*.both-db.test.ts' -not -path '*/e2e/*' | sort)
status=0
export SIGHTFLOW_TEST_DB=pglite
# CLI tests run the built dist/ (setup built it), as the README's commands do.
export SIGHTFLOW_TEST_DIST=1
echo "== node tests (PGlite)"
run_node_tests .tmp/test-pglite.tap 2 $(compiled $files) || status=1
echo "== both-database tests (PostgreSQL)"
# Bounded like the tests: starting or stopping the cluster takes seconds (pg_ctl itself waits at most 60 s).
cluster=$(timeout 180 node --import tsx test/helpers/pg-cluster.ts start) || { echo "the PostgreSQL cluster did not start"; exit 1; }
eval "$cluster"
trap 'timeout 180 node --import tsx test/helpers/pg-cluster.ts stop' EXIT
# Three files at a time here, two in the PGlite run: these files mostly wait on real time (worker leases, live
# sources, restarts), and at two at a time they kept the cores only about half busy (docs/benchmarks.md, "The
# suite's time in CI").
SIGHTFLOW_TEST_DB=postgres run_node_tests .tmp/test-postgres.tap 3 $(compiled $both_db) || status=1
exit $status

#!/usr/bin/env bash
# The web console end to end: headless Debian Chromium (playwright-core) against a real server.
# Two files at a time: each spends much of its time starting a server and a browser and waiting on pages
# (docs/benchmarks.md, "The suite's time in CI").
set -uo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
source scripts/lib/test-tree.sh
source scripts/lib/node-tests.sh
ensure_test_tree || exit 1
mkdir -p .tmp
run_node_tests .tmp/test-e2e.tap 2 $(compiled $(find test/e2e -name '*.test.ts' | sort))
